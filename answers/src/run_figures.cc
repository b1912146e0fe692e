#include "run_figures.h"

#include <vector>

namespace crest::answers::internal {

absl::StatusOr<std::map<store::RunKey, store::RunRecord>> DescribeEach(
    store::Store& db, const std::set<store::RunKey>& runs) {
  const std::vector<store::RunKey> keys(runs.begin(), runs.end());
  auto described = db.DescribeRuns(keys);
  if (!described.ok()) return described.status();
  std::map<store::RunKey, store::RunRecord> out;
  for (store::RunRecord& r : *described) out.emplace(r.key, std::move(r));
  return out;
}

std::pair<double, double> IntervalOf(const store::RunBest& b) {
  return {b.ci_low_us > 0 ? b.ci_low_us : b.median_us,
          b.ci_high_us > 0 ? b.ci_high_us : b.median_us};
}

}  // namespace crest::answers::internal
