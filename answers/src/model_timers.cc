#include "model_timers.h"

#include <string>

#include "crest/tuner/predictor.h"
#include "crest/tuner/timing.h"

namespace crest::answers::internal {
namespace {

// A GEMM the model has no path for: the candidate is missing.
absl::Status Missing(const absl::Status& s) { return absl::NotFoundError(s.message()); }

}  // namespace

SetTimers ModelTimers(const tuner::GpuSpec& gpu) {
  SetTimers t;
  t.time = tuner::EachGemm([timer = tuner::PredictorTimer(gpu)](
                               const tuner::GemmShape& g) -> absl::StatusOr<tuner::Timing> {
    auto p = timer(g);
    if (!p.ok()) return Missing(p.status());
    return p;
  });
  t.sum = [&gpu](std::span<const tuner::GemmShape> set) -> absl::StatusOr<tuner::Timing> {
    tuner::Timing sum;
    for (size_t i = 0; i < set.size(); ++i) {
      auto p = tuner::Predict(set[i], gpu);
      if (!p.ok()) return Missing(p.status());
      // The part as PredictorTimer makes it but for its model version,
      // which the sum takes from its first part alone.
      tuner::AddTiming(sum, tuner::PredictedTiming(p->time_us, p->expected_error, {}), i == 0);
      if (i == 0) sum.provenance = std::string(p->model_version);
    }
    return sum;
  };
  return t;
}

}  // namespace crest::answers::internal
