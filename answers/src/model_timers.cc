#include "model_timers.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crest/tuner/predictor.h"
#include "crest/tuner/timing.h"
#include "crest/tuner/timing_ops.h"

namespace crest::answers::internal {
namespace {

// A GEMM the model has no path for: the candidate is missing.
absl::Status Missing(const absl::Status& s) { return absl::NotFoundError(s.message()); }

// The labels of a sum predicted by `model_version`: one of `made`, or a new
// one added to it.
std::shared_ptr<const tuner::TimingLabels> LabelsOf(
    std::string_view model_version, std::vector<std::shared_ptr<const tuner::TimingLabels>>& made) {
  for (const auto& labels : made) {
    if (labels->provenance == model_version) return labels;
  }
  auto labels = std::make_shared<tuner::TimingLabels>();
  labels->provenance = std::string(model_version);
  made.push_back(labels);
  return labels;
}

}  // namespace

SetTimers ModelTimers(const tuner::GpuSpec& gpu) {
  SetTimers t;
  t.time = tuner::EachGemm([timer = tuner::PredictorTimer(gpu)](
                               const tuner::GemmShape& g) -> absl::StatusOr<tuner::Timing> {
    auto p = timer(g);
    if (!p.ok()) return Missing(p.status());
    return p;
  });
  // The labels made so far, one per model version (a set of timers serves
  // one thread at a time), shared by every sum of that version.
  auto made = std::make_shared<std::vector<std::shared_ptr<const tuner::TimingLabels>>>();
  t.sum = [&gpu, made](std::span<const tuner::GemmShape> set) -> absl::StatusOr<tuner::SetSum> {
    tuner::Timing sum;
    std::shared_ptr<const tuner::TimingLabels> labels;
    for (size_t i = 0; i < set.size(); ++i) {
      auto p = tuner::Predict(set[i], gpu);
      if (!p.ok()) return Missing(p.status());
      // The part as PredictorTimer makes it but for its model version,
      // which the sum takes from its first part alone.
      tuner::AddFigures(sum, tuner::PredictedTiming(p->time_us, p->expected_error, {}), i == 0);
      if (i == 0) labels = LabelsOf(p->model_version, *made);
    }
    return tuner::SetSumOf(sum, std::move(labels));
  };
  return t;
}

}  // namespace crest::answers::internal
