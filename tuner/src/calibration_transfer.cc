#include "crest/tuner/calibration_transfer.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "text.h"

namespace crest::tuner {

bool CalibrationSiblings(const GpuSpec& a, const GpuSpec& b) {
  return a.architecture == b.architecture && a.compute_capability == b.compute_capability;
}

bool SameDie(const GpuSpec& a, const GpuSpec& b) {
  return a.sm_count == b.sm_count && a.boost_clock_mhz == b.boost_clock_mhz &&
         a.power_w == b.power_w;
}

TransferScale TransferBetween(const GpuSpec& source, const ModelParams& source_params,
                              const GpuSpec& target) {
  TransferScale t;
  t.source_clock_mhz = source.boost_clock_mhz * source_params.sustained_clock_ratio;
  const double source_w_per_sm = source.power_w / source.sm_count;
  const double target_w_per_sm = target.power_w / target.sm_count;
  t.target_clock_mhz = std::min(target.boost_clock_mhz,
                                t.source_clock_mhz * std::cbrt(target_w_per_sm / source_w_per_sm));
  t.rate_scale = (target.sm_count * t.target_clock_mhz) / (source.sm_count * t.source_clock_mhz);
  t.added_error = SameDie(source, target) ? kSameDieError : kOtherPowerError;
  return t;
}

Calibration TransferCalibration(const Calibration& from, const GpuSpec& source,
                                const GpuSpec& target) {
  const TransferScale t = TransferBetween(source, from.params, target);
  Calibration c = from;
  c.gpu = std::string(target.name);
  ModelParams& p = c.params;
  if (p.fast_tflops > 0) p.fast_tflops *= t.rate_scale;
  if (p.fallback_tflops > 0) p.fallback_tflops *= t.rate_scale;
  for (double& e : p.expected_error) e += t.added_error;
  std::string lower = c.gpu;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  c.transferred_from = from.id;
  c.id = StrCat(lower, "-", DTypeName(c.dtype), "-from-", from.id);
  c.model_version = StrCat(kPredictorVersion, "+", c.id);
  c.label =
      StrCat("transferred to ", target.name, " from ", source.name, "'s calibration (", from.id,
             "): rates x", Decimals(t.rate_scale, 3), " (", target.sm_count, " SMs at a sustained ",
             Decimals(t.target_clock_mhz, 0), " MHz against ", source.sm_count, " at ",
             Decimals(t.source_clock_mhz, 0), " MHz); expected error ", DescribeErrors(p));
  return c;
}

}  // namespace crest::tuner
