// Internal to crest::answers: the stored times of sets of GEMMs, looked up
// in a result store (nothing is run): each set's measured figures from one
// run (RunChoice::kLatest) or the pool of every run (kAll), else predicted
// (the store's predictions, or the model run now).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "crest/answers/answers.h"
#include "crest/store/store.h"
#include "crest/tuner/gemm_sets.h"
#include "crest/tuner/timing.h"

namespace crest::answers::internal {

class StoredTimes {
 public:
  // `db`, `gpu` and `options` must outlive it. It reads `db` in one
  // snapshot (store::ReadSnapshot) for its whole life: what it keeps of
  // the store (versions, runs, rows, labels) is then of one state of the
  // database, and so is what its owner reads of `db` meanwhile.
  StoredTimes(store::Store& db, const tuner::GpuSpec& gpu, const AnswerOptions& options)
      : db_(db), snapshot_(db), gpu_(gpu), options_(options) {}

  // Reads what `sets` need in a few queries (each run's bests of every key,
  // the store's predictions for sets no run answers) and chooses each set's
  // run. A prefetched set is known by where its GEMMs lie: `sets` must stay
  // alive and unchanged while they are timed. Sets timed without it are read
  // when timed.
  absl::Status Prefetch(const tuner::GemmSets& sets);

  // Measured where the options allow, else predicted.
  absl::StatusOr<std::vector<tuner::Timing>> Time(std::span<const tuner::GemmShape> set);
  // Predicted only.
  absl::StatusOr<std::vector<tuner::Timing>> Predicted(std::span<const tuner::GemmShape> set);
  // SumTimings(Time(set)) (tuner::TimingOf it), without a Timing per
  // measured GEMM: the labels (device, software, runs, provenance) are made
  // once for each run (or pool) and shared by every set it answers.
  absl::StatusOr<tuner::SetSum> Sum(std::span<const tuner::GemmShape> set);

  // The measured answer of a set: per GEMM the chosen run's best (pooled:
  // the lower middle run's), and the runs used.
  struct Choice {
    Choice() = default;
    // Its bests kept in `arena`.
    explicit Choice(std::pmr::memory_resource* arena) : bests(arena) {}
    // One per GEMM of the set: the run's best (pooled: the lower middle run's).
    // Prefetch's are in one arena (StoredTimes::arena_): a ranking chooses
    // for every candidate, and a heap block each, made and freed, was 5% of
    // its instructions. A copy is on the heap.
    std::pmr::vector<store::RunBest> bests;
    // Pooled, per GEMM: the median of the runs' medians (with an even count
    // the mean of the two middle ones) and the interval covering all runs'.
    std::vector<double> pooled_us;
    std::vector<std::pair<double, double>> pool;
    // The run, or every run pooled; inline for one (every set answered by
    // one run: no allocation a set).
    absl::InlinedVector<store::RunKey, 1> runs;
    bool pooled = false;
  };
  // The newest software version (the pinned one, or each allowed one, newest
  // first) on which every GEMM of the set was measured answers: its most
  // recent run that measured them all (kLatest), or all its runs pooled
  // (kAll). nullopt: none answers; `across_runs` (if given) says whether
  // some version measured every GEMM, but by no one run.
  absl::StatusOr<std::optional<Choice>> Choose(std::span<const tuner::GemmShape> set,
                                               bool* across_runs = nullptr);

  // What answers say about a run (read once, when first used).
  absl::StatusOr<const store::RunRecord*> Run(const store::RunKey& run);

  // Sets Time answered predicted although every GEMM was measured (by no
  // one run).
  int64_t across_runs() const { return across_runs_; }

 private:
  // One software version's runs: each key's, newest first.
  struct Version {
    int64_t software_id = 0;
    std::set<store::GemmKey> fetched;
    std::map<store::GemmKey, std::vector<store::RunBest>> bests;
    std::optional<std::vector<store::RunBest>> runs;  // ListRuns's, when read
  };
  absl::Status LoadVersions();
  // Choose's answer without a copy: the prefetched choice where it is kept,
  // else one made into `made`; nullptr when none answers.
  absl::StatusOr<const Choice*> ChoiceOf(std::span<const tuner::GemmShape> set, bool* across_runs,
                                         std::optional<Choice>& made);
  using OpenSets = std::vector<std::span<const tuner::GemmShape>>;
  // kLatest: answers the open sets that one of the version's newest runs
  // measured whole, run by run from the newest, reading only that run's
  // rows (so a window's answer does not grow with its history); leaves the
  // rest open. `keys`: the open sets' GEMMs, set after set.
  absl::Status ChooseFromNewestRuns(Version& version, OpenSets& open,
                                    std::span<const store::GemmKey> keys);
  // Chooses `run`'s bests for `set` when the run has every one of its
  // GEMMs (`bests`, the set's, in order); whether it did.
  bool TakeRun(std::span<const tuner::GemmShape> set, const store::RunKey& run,
               std::span<const store::RunBest* const> bests);
  // Reads each key's runs of `version`, kept newest first.
  absl::Status ReadRuns(Version& version, std::span<const store::GemmKey> keys);
  // The same for keys not read before.
  absl::Status FetchRuns(Version& version, std::span<const store::GemmKey> keys);
  // The store's predictions of `keys` (the model version per key's dtype).
  absl::Status ReadPredictions(std::span<const store::GemmKey> keys);
  // The same for keys not read before.
  absl::Status FetchPredictions(std::span<const tuner::GemmShape> gemms);
  // The set's answer in `version` (the run choice's); nullopt when the
  // version did not measure every key (`whole` false) or, kLatest, no one
  // run did.
  std::optional<Choice> ChooseIn(const Version& version, std::span<const store::GemmKey> keys,
                                 bool& whole) const;
  static std::optional<Choice> Latest(const Version& version, std::span<const store::GemmKey> keys);
  static Choice Pooled(const Version& version, std::span<const store::GemmKey> keys);
  absl::StatusOr<std::vector<tuner::Timing>> Measured(const Choice& choice);
  // SumTimings(Measured(choice)), part by part in the same order.
  absl::StatusOr<tuner::SetSum> MeasuredSum(const Choice& choice);
  // The labels of a measured sum whose first part is `first`'s and whose
  // runs are the choice's (made once for each).
  absl::StatusOr<std::shared_ptr<const tuner::TimingLabels>> LabelsOf(
      const Choice& choice, const store::RunKey& first, const store::RunRecord& record);
  // Measured's inputs: the choice's runs as RunInfo, and the run,
  // provenance and figures of its i-th GEMM.
  absl::StatusOr<std::vector<tuner::RunInfo>> RunsOf(const Choice& choice);
  struct Part {
    const store::RunRecord* run = nullptr;
    const std::string* provenance = nullptr;
    double median_us = 0, low_us = 0, high_us = 0;  // MeasuredTiming's inputs
  };
  absl::StatusOr<Part> PartOf(const Choice& choice, size_t i);
  // How answers describe a run's measurements (made once a run; Measured
  // and MeasuredSum give it).
  const std::string& Provenance(const store::RunKey& key, const store::RunRecord& run);

  store::Store& db_;
  store::ReadSnapshot snapshot_;
  const tuner::GpuSpec& gpu_;
  const AnswerOptions& options_;
  std::optional<std::vector<Version>> versions_;  // newest first
  // Where Prefetch's choices keep their bests: freed at once, with this.
  // Declared before the choices, so it outlives them.
  std::pmr::monotonic_buffer_resource arena_;
  // Prefetch's choices, by the set's keys.
  struct Chosen {
    size_t size = 0;  // GEMMs in the set
    store::GemmKey first;
    std::optional<Choice> choice;
    bool across_runs = false;
    bool predictions_read = false;  // the store's predictions of its GEMMs are in predictions_
  };
  // Prefetch's sets, in the order first prefetched, and where each is by its
  // first GEMM's address (a window of 100,000 candidates keeps no second
  // copy of its keys); hashed: a ranking looks each set up four times, and
  // a tree's walk was most of Prefetch's own time under perf. Two flat
  // arrays, not a node a set (an allocation each), and not the sets in the
  // table (a table of 512 of them is past crestd's mmap threshold, 128 KiB:
  // an mmap and its page faults every ranking tripled QueryDff's cost). A
  // Prefetch may move the sets, so a pointer to one lives for one call.
  std::vector<Chosen> chosen_;
  absl::flat_hash_map<const tuner::GemmShape*, size_t> chosen_at_;
  Chosen& ChosenOf(std::span<const tuner::GemmShape> set) {
    return chosen_[chosen_at_.at(set.data())];
  }
  const Chosen* Prefetched(std::span<const tuner::GemmShape> set) const;
  std::map<store::RunKey, store::RunRecord> runs_;
  // The run Run found last: consecutive sets are mostly one run's.
  const std::pair<const store::RunKey, store::RunRecord>* last_run_ = nullptr;
  std::map<store::RunKey, std::string> provenance_;
  // LabelsOf's, by the first part's run and then the choice's runs; looked
  // up without a copy of the runs (a view), copied only when added.
  struct LabelsKey {
    store::RunKey first;
    std::vector<store::RunKey> runs;
  };
  struct LabelsKeyView {
    const store::RunKey& first;
    std::span<const store::RunKey> runs;
  };
  struct LabelsKeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      if (a.first != b.first) return a.first < b.first;
      return std::lexicographical_compare(a.runs.begin(), a.runs.end(), b.runs.begin(),
                                          b.runs.end());
    }
  };
  std::map<LabelsKey, std::shared_ptr<const tuner::TimingLabels>, LabelsKeyLess> labels_;
  // The labels LabelsOf gave last (of consecutive sets, mostly the same).
  const std::pair<const LabelsKey, std::shared_ptr<const tuner::TimingLabels>>* last_labels_ =
      nullptr;
  std::set<store::GemmKey> predictions_fetched_;
  std::map<store::GemmKey, store::PredictionRow> predictions_;
  int64_t across_runs_ = 0;
};

}  // namespace crest::answers::internal
