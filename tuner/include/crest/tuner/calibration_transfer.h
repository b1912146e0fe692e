// Moving a calibration between GPUs of one architecture. A calibration is
// fitted on one GPU (say the H100 SXM); its siblings — the same architecture
// and compute capability: the H200, GH200, H800 and H100 PCIe for Hopper —
// run the same kernels on the same SMs, and differ in how many SMs they have
// and the clock those SMs sustain under load. So the fitted rates move by
//
//   rate_scale = (SMs_target · sustained_clock_target) / (SMs_source · sustained_clock_source)
//
// where the source's sustained clock is its boost clock × the architecture's
// measured sustained ratio (an H100 at its 700 W cap: 1455 of 1980 MHz), and
// the target's is the same clock scaled by the cube root of the power each
// SM may draw (dynamic power grows about as clock³ when voltage follows
// clock), never above the target's boost clock. Memory bandwidth, L2 and SMs
// come from the target's datasheet as always; every other parameter is kept.
// The result is labelled "transferred", and its expected error is the
// source's plus kSameDieError (same SMs, clocks and power: the H200 runs the
// H100's MLP GEMMs within ±3%) or kOtherPowerError (a clock under another
// power limit is the cube-root assumption's).
#pragma once

#include "crest/tuner/calibration.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::tuner {

inline constexpr double kSameDieError = 0.03;
inline constexpr double kOtherPowerError = 0.10;

struct TransferScale {
  double source_clock_mhz = 0;  // sustained under load
  double target_clock_mhz = 0;
  double rate_scale = 1;
  double added_error = kSameDieError;
};

// Whether a calibration of one may be moved to the other.
bool CalibrationSiblings(const GpuSpec& a, const GpuSpec& b);
// The same SMs, boost clock and power: the same die run alike (H100 SXM,
// H200, GH200, H800), so a transfer adds only kSameDieError.
bool SameDie(const GpuSpec& a, const GpuSpec& b);

TransferScale TransferBetween(const GpuSpec& source, const ModelParams& source_params,
                              const GpuSpec& target);

// `from` (fitted on `source`) as `target`'s calibration: rates scaled, error
// widened, named "<target>-<dtype>-from-<from.id>" and labelled transferred.
Calibration TransferCalibration(const Calibration& from, const GpuSpec& source,
                                const GpuSpec& target);

}  // namespace crest::tuner
