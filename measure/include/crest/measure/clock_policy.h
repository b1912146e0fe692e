// The clock policy, fed plain readings so that tests replay a recorded GPU:
// when the GPU has settled after warm-up, and which samples count.
//
// Sustained (default): under sustained GEMM load an H100 sits at its power
// cap (NVML reason "SW power cap") with the SM clock at 1410–1515 MHz, well
// under its 1980 MHz boost; that is how training runs, so power capping never
// discards a sample. A sample is discarded only for thermal or hardware
// slowdown, or a clock far (25%) below the GEMM's own settled clock (the
// median of its rounds; nvbench uses 75% too).
// Burst: the boost clock right after idle. Samples count only while the
// clock holds near the boost clock and no power cap is active; the engine
// lets the GPU cool down between bursts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crest/tuner/measurement.h"

namespace crest::measure {

// NVML clock-event ("throttle") reasons, nvmlDeviceGetCurrentClocksEventReasons.
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClocks = 0x100;
// The reasons that discard a sustained sample: the GPU is slowed by heat or
// by hardware protection, not by the power budget it always runs under.
inline constexpr uint64_t kSlowdownReasons =
    kReasonHwSlowdown | kReasonSwThermal | kReasonHwThermal | kReasonHwPowerBrake;

// "sw-power-cap+hw-thermal"; "none" for 0.
std::string DescribeReasons(uint64_t reasons);

// One reading of the GPU's state. 0 (and reasons_known false) is unknown:
// a machine without NVML still measures, with nothing discarded.
struct GpuReading {
  double time_s = 0;  // on the engine's clock
  double sm_clock_mhz = 0;
  double power_w = 0;
  uint64_t reasons = 0;
  bool reasons_known = false;
};

struct SettleOptions {
  double min_s = 1.0;             // warm up at least this long
  double max_s = 10.0;            // give up waiting after this long (and say so)
  double window_s = 0.5;          // stability is judged over two windows this long
  double power_tolerance = 0.05;  // power range within the last window / its median
  double clock_tolerance = 0.03;  // change of the median clock between the windows
};

// Warm-up: settled when, after min_s, the power in the last window stays
// within power_tolerance and the median clock moved by at most
// clock_tolerance since the window before. Unknown quantities are not judged.
class SettleDetector final {
 public:
  explicit SettleDetector(SettleOptions options = {}) : options_(options) {}
  void Add(const GpuReading& reading);
  bool Settled() const;
  bool TimedOut() const;    // max_s passed without settling
  double ClockMhz() const;  // median clock of the last window; 0 unknown
  double PowerW() const;    // median power of the last window; 0 unknown
  double ElapsedS() const;

 private:
  std::vector<GpuReading> Window(double from_s, double to_s) const;
  SettleOptions options_;
  std::vector<GpuReading> readings_;
};

// Back at the settled load after an idle gap: the clock no more than
// `tolerance` above the settled clock AND the power no more than `tolerance`
// under the settled power. NVML's power on Hopper is a one-second average,
// so right after a gap it lags the clock; requiring both waits for it. A
// quantity unknown in either reading is not judged; false when neither is
// known (the caller's time bound decides).
bool AtLoad(const GpuReading& now, const GpuReading& settled, double tolerance);

// Why a sample did not count. kAfterIdle: its round started after the
// device idled (sustained), so the GPU ran it recovered from its load.
enum class Discard { kSlowdown, kClockFarBelow, kPowerCapped, kBelowBoost, kAfterIdle };
std::string_view DiscardName(Discard why);

// Judges samples by the reading taken with them. `reference_mhz` is the
// settled clock (sustained: the median of the GEMM's rounds) or the boost
// clock (burst); 0 when unknown.
class SampleFilter final {
 public:
  SampleFilter(tuner::ClockPolicy policy, double reference_mhz)
      : policy_(policy), ref_(reference_mhz) {}
  std::optional<Discard> Judge(const GpuReading& reading) const;
  tuner::ClockPolicy policy() const { return policy_; }
  double reference_mhz() const { return ref_; }

  static constexpr double kSustainedFloor = 0.75;  // of the settled clock
  static constexpr double kBurstFloor = 0.97;      // of the boost clock

 private:
  tuner::ClockPolicy policy_;
  double ref_;
};

}  // namespace crest::measure
