#include "result_counts.h"

#include "crest/store/store.h"

namespace crest::service {

absl::StatusOr<store::DbStats> ResultCounts::Get(store::Store& db, double now_s) {
  auto generation = db.LatestGeneration();
  if (!generation.ok()) return generation.status();
  auto jobs = db.JobsByState();
  if (!jobs.ok()) return jobs.status();
  std::lock_guard lock(mu_);
  // One count per generation, and not more often than kMinRecountSeconds:
  // callers that arrive while it runs wait for it.
  // A clock that went back (a wall-clock step) counts as time passed, so the
  // counts never freeze until it catches up.
  const double since_s = now_s - counted_at_s_;
  if (!generation_ ||
      (!(*generation_ == *generation) && (since_s >= kMinRecountSeconds || since_s < 0))) {
    auto stats = store::Stats(db);
    if (!stats.ok()) return stats.status();
    stats_ = *std::move(stats);
    generation_ = *generation;
    counted_at_s_ = now_s;
    ++counts_taken_;
  }
  store::DbStats out = stats_;
  out.jobs_by_state = *std::move(jobs);
  return out;
}

int64_t ResultCounts::counts_taken() const {
  std::lock_guard lock(mu_);
  return counts_taken_;
}

}  // namespace crest::service
