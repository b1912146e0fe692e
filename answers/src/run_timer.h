// Internal to crest::answers: times sets of GEMMs from a result store, each
// set's measured figures from one run (RunChoice::kLatest) or the pool of
// every run (kAll), else predicted (the store's predictions, or the model
// run now).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/answers/answers.h"

namespace crest::answers::internal {

class RunTimer {
 public:
  // `db`, `gpu` and `options` must outlive the timer.
  RunTimer(store::Store& db, const GpuSpec& gpu, const AnswerOptions& options)
      : db_(db), gpu_(gpu), options_(options) {}

  // Reads what `sets` need in a few queries (each run's bests of every key,
  // the runs, the store's predictions for sets no run answers). Sets timed
  // without it are read when timed.
  absl::Status Prefetch(std::span<const std::vector<GemmShape>> sets);

  // Measured where the options allow, else predicted.
  absl::StatusOr<std::vector<Timing>> Time(std::span<const GemmShape> set);
  // Predicted only.
  absl::StatusOr<std::vector<Timing>> Predicted(std::span<const GemmShape> set);

  // The measured answer of a set: per GEMM the chosen run's best (pooled:
  // the median run's), and the runs used.
  struct Choice {
    // One per GEMM of the set: the run's best (pooled: the lower middle run's).
    std::vector<store::RunBest> bests;
    // Pooled, per GEMM: the median of the runs' medians (with an even count
    // the mean of the two middle ones) and the interval covering all runs'.
    std::vector<double> pooled_us;
    std::vector<std::pair<double, double>> pool;
    std::vector<const store::RunRecord*> runs;   // the run, or every run pooled
    bool pooled = false;
  };
  // nullopt: no run (and, for kAll, not every GEMM) measured.
  absl::StatusOr<std::optional<Choice>> Choose(std::span<const GemmShape> set);

  // Sets Time answered predicted although every GEMM was measured (by no
  // one run).
  int64_t across_runs() const { return across_runs_; }

 private:
  absl::Status FetchRuns(const std::set<store::GemmKey>& keys);
  absl::Status FetchPredictions(std::span<const GemmShape> gemms);
  std::optional<Choice> Latest(const std::vector<store::GemmKey>& keys) const;
  Choice Pooled(const std::vector<store::GemmKey>& keys) const;
  Timing MeasuredTiming(const Choice& choice, size_t i) const;
  // Newer first: the job's creation time, then ids.
  bool Newer(const store::RunKey& a, const store::RunKey& b) const;

  store::Store& db_;
  const GpuSpec& gpu_;
  const AnswerOptions& options_;
  std::set<store::GemmKey> fetched_;
  std::map<store::GemmKey, std::vector<store::RunBest>> bests_;
  std::map<store::RunKey, store::RunRecord> runs_;
  std::set<store::GemmKey> predictions_fetched_;
  std::map<store::GemmKey, store::PredictionRow> predictions_;
  int64_t across_runs_ = 0;
};

}  // namespace crest::answers::internal
