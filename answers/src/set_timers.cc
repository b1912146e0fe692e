#include "crest/answers/set_timers.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"

namespace crest::answers {

absl::StatusOr<tuner::DffRanking> RankDffWith(const tuner::DffQuery& query,
                                              const tuner::GpuSpec& gpu, const SetTimers& timers) {
  tuner::DffQuery q = query;
  q.skip_missing = true;
  auto plan = tuner::PlanDff(q);
  if (!plan.ok()) return plan.status();
  if (timers.prefetch) {
    if (auto s = timers.prefetch(plan->gemms); !s.ok()) return s;
  }
  auto ranking = tuner::RankDff(q, *plan, timers.time, timers.predict, timers.races, timers.sum);
  if (!ranking.ok()) return ranking;
  if (ranking->rows.empty()) {
    return absl::FailedPreconditionError(
        StrCat("no candidate of the window could be answered: ", tuner::DTypeName(q.dtype),
               " has no path on ", gpu.name, " in ", tuner::DescribeModel(gpu, q.dtype)));
  }
  if (timers.across_runs) ranking->measured_across_runs = timers.across_runs();
  return ranking;
}

absl::StatusOr<tuner::VocabRanking> RankVocabWith(const tuner::VocabQuery& query,
                                                  const SetTimers& timers) {
  return tuner::RankVocabPaddings(query, timers.time, timers.predict);
}

absl::StatusOr<std::vector<tuner::DesignRow>> RankDesignsWith(
    std::span<const tuner::DesignConfig> configs, const tuner::DesignOptions& options,
    const tuner::GpuSpec& gpu, const SetTimers& timers) {
  tuner::DesignOptions on_gpu = options;
  on_gpu.gpu = &gpu;
  std::vector<tuner::DesignRow> rows;
  rows.reserve(configs.size());
  for (const tuner::DesignConfig& c : configs) {
    auto row = tuner::EvaluateDesign(c, on_gpu, timers.time);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  tuner::RankDesigns(rows);
  return rows;
}

}  // namespace crest::answers
