#include "crest/answers/set_timers.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"

namespace crest::answers {

absl::StatusOr<DffRanking> RankDffWith(const DffQuery& query, const GpuSpec& gpu,
                                       const SetTimers& timers) {
  DffQuery q = query;
  q.skip_missing = true;
  auto plan = PlanDff(q);
  if (!plan.ok()) return plan.status();
  if (timers.prefetch) {
    if (auto s = timers.prefetch(plan->gemms); !s.ok()) return s;
  }
  auto ranking = RankDff(q, *plan, timers.time, timers.predict, timers.races, timers.sum);
  if (!ranking.ok()) return ranking;
  if (ranking->rows.empty()) {
    return absl::FailedPreconditionError(
        StrCat("no candidate of the window could be answered: ", DTypeName(q.dtype),
               " has no path on ", gpu.name, " in ", DescribeModel(gpu, q.dtype)));
  }
  if (timers.across_runs) ranking->measured_across_runs = timers.across_runs();
  return ranking;
}

absl::StatusOr<VocabRanking> RankVocabWith(const VocabQuery& query, const SetTimers& timers) {
  return RankVocabPaddings(query, timers.time, timers.predict);
}

absl::StatusOr<std::vector<DesignRow>> RankDesignsWith(std::span<const DesignConfig> configs,
                                                       const DesignOptions& options,
                                                       const GpuSpec& gpu,
                                                       const SetTimers& timers) {
  DesignOptions on_gpu = options;
  on_gpu.gpu = &gpu;
  std::vector<DesignRow> rows;
  rows.reserve(configs.size());
  for (const DesignConfig& c : configs) {
    auto row = EvaluateDesign(c, on_gpu, timers.time);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  RankDesigns(rows);
  return rows;
}

}  // namespace crest::answers
