// Internal to crestd: the database counts GetNodeInfo reports, kept for the
// results generation they were counted at (store::Store::LatestGeneration).
// Counting results scans the whole database (0.45 s on 1.1 M measurements),
// so without this every GetNodeInfo, from a monitor or a hostile client,
// would cost a full scan. With it the counts are taken again only when a
// write has moved the generation, and at most every kMinRecountSeconds (a
// sweep writes several results a second): they may lag a running sweep by
// that much. Jobs by state (kept by triggers, schema 7) are read on every
// call and are always current.
#pragma once

#include <mutex>
#include <optional>

#include "absl/status/statusor.h"
#include "crest/store/admin.h"

namespace crest::service {

class ResultCounts {
 public:
  static constexpr double kMinRecountSeconds = 2.0;

  // `db`'s stats at `now_s` (a monotonic clock, seconds; one that goes back
  // recounts at the next change, never freezes): result counts (and
  // schema version, file size) as last counted, jobs by state as now.
  absl::StatusOr<store::DbStats> Get(store::Store& db, double now_s);

  // Full counts taken so far (for tests).
  int64_t counts_taken() const;

 private:
  mutable std::mutex mu_;
  std::optional<store::ResultsGeneration> generation_;
  double counted_at_s_ = 0;
  store::DbStats stats_;
  int64_t counts_taken_ = 0;
};

}  // namespace crest::service
