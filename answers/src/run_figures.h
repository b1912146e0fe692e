// Internal to crest::answers: what comparisons (compare.cc) and a fleet's
// check (fleet_health.cc) read of the runs they set side by side.
#pragma once

#include <map>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "crest/store/store.h"

namespace crest::answers::internal {

// Each run's job, device and software, read once per run (DescribeRuns).
absl::StatusOr<std::map<store::RunKey, store::RunRecord>> DescribeEach(
    store::Store& db, const std::set<store::RunKey>& runs);

// A run's 95% interval of its median [µs]; the median itself at both ends
// where the row predates intervals.
std::pair<double, double> IntervalOf(const store::RunBest& best);

}  // namespace crest::answers::internal
