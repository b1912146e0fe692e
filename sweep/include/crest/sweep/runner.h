// Runs a sweep spec through a backend into a store, as a resumable job.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "crest/common/env.h"
#include "crest/measure/study_race.h"
#include "crest/store/records.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/backend.h"

namespace crest::store {
class Store;  // crest/store/store.h: a caller passing one has it
}  // namespace crest::store

namespace crest::sweep {

struct SweepProgress {
  int64_t done = 0;         // GEMMs with a result in the store (this run or before)
  int64_t total = 0;        // GEMMs in the plan
  int64_t new_results = 0;  // results this run wrote
  int64_t failed = 0;       // GEMMs the backend could not run
  double elapsed_s = 0;     // since this run started
  double busy_s = 0;        // time spent inside the backend
  double kernel_s = 0;      // device time inside the engine's timed kernels (measuring backends)
  tuner::HostStages host;   // the engines' steps outside their kernels, summed
  double write_s = 0;       // writing results to the database
  double reload_s = 0;      // untimed load making up idle gaps before sampling (in kernel_s)
  double keep_load_s = 0;   // untimed load queued to run while the host worked (in kernel_s)

  // Where the time of this run went (docs/measurement.md, "Accounting"):
  // GEMMs run (results and failures) per minute of wall time, the fraction
  // of wall time the device spent in timed kernels, and the wall time
  // outside them per GEMM run [s]. 0 before any GEMM ran.
  double GemmsPerMinute() const;
  double GpuBusyFraction() const;
  double HostOverheadPerGemmS() const;
  // The host time per GEMM run by step [s]: the engine's (host), the rest
  // of the backend's time outside kernels and those steps, the database
  // write, and the time between GEMMs (the runner's own work and gaps);
  // beside them, the untimed device load per GEMM run (keep-load, reload).
  struct PerGemm {
    tuner::HostStages host;
    double other_engine_s = 0;
    double write_s = 0;
    double between_s = 0;
    double keep_load_s = 0;
    double reload_s = 0;
  };
  PerGemm HostPerGemm() const;
};

// A d_ff study's race after the per-GEMM pass (measuring backends;
// docs/measurement.md, "Racing a study's leaders").
struct StudyRaceReport {
  std::string study;                                  // DffStudyKey of the spec's study
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;  // whose answer was raced
  int64_t race_id = 0;                                // the stored race; 0 when not raced
  std::string why_not;                                // when not raced (or the race failed)
  int64_t raced_job = 0;  // the run whose candidates and algorithms were raced
  // "measured on NVIDIA H100 80GB HBM3 GPU-…, cuBLASLt 130100", or "replayed
  // (not measured) on a simulated H100-SXM: <table, hash, noise, seed, drift>"
  std::string measured_on;
  std::vector<int64_t> d_ff;        // the candidates, in the order entered
  measure::StudyRaceResult result;  // when raced
};

// "race 3 of dff hidden=4096 …: 3 candidates of job 1 measured on NVIDIA
// H100 80GB HBM3 GPU-…, cuBLASLt 130100; 12 rounds, 4.1 s
// (warm-up 1.2 s, settled; 0 retaken after an idle gap; stopped: resolved):
// leader d_ff 10944 (1953.2 us); tied 11008 (1.0021, 0.9987-1.0055); …",
// or "race of dff …: not raced: why". A race of cuBLASLt's first choices
// says so after the study.
std::string DescribeRace(const StudyRaceReport& race);

// "" for the fastest algorithms, " (cuBLASLt's first-choice algorithms)".
std::string RaceAlgoNote(tuner::AlgoChoice algo);

struct SweepOptions {
  bool force = false;  // run GEMMs the store already holds for this device/software/model
  int priority = 0;    // recorded on a new job
  // Called after each GEMM (a batch of predictions: after its commit); not
  // called from other threads.
  std::function<void(const SweepProgress&)> on_progress;
  // Called for each GEMM's result once it is committed; same thread as
  // on_progress.
  std::function<void(const tuner::GemmShape&, const tuner::GemmOutcome&)> on_result;
  // A backend that only predicts commits its results this many GEMMs at a
  // time, and at least every kPredictionBatchSeconds: one transaction and
  // one sync per batch. A crash loses only the batch not yet committed,
  // which the resumed job runs again. 1: a transaction per GEMM. Measuring
  // backends always commit each GEMM.
  int prediction_batch = 512;
  // Called with a line of progress outside the per-GEMM pass (the races).
  std::function<void(std::string_view)> on_stage;
  // Polled between GEMMs; when it becomes true the job is left "cancelled".
  const std::atomic<bool>* cancel = nullptr;
  // Polled between GEMMs; when it becomes true the run stops and the job is
  // left "queued", to be resumed later (a daemon shutting down).
  const std::atomic<bool>* interrupt = nullptr;
  // Polled between GEMMs, after cancel and interrupt: a reason to stop
  // (crestd's wall-time budget), which leaves the job "failed" with that
  // reason in one write, never "cancelled" first; empty: go on.
  std::function<std::string()> fail_reason;
  // Run this existing job (queued, or left unfinished) instead of finding or
  // creating one; it must hold this spec.
  std::optional<int64_t> job_id;
  // The monotonic clock of elapsed and busy times; nullptr = DefaultEnv().
  const Env* env = nullptr;
};

struct SweepOutcome {
  store::JobRecord job;  // as left in the store
  SweepProgress progress;
  int64_t already_present = 0;  // GEMMs skipped because the store held them
  bool resumed = false;         // continued an unfinished job
  bool interrupted = false;     // stopped by `interrupt`; the job is queued again
  std::string first_error;      // the first GEMM failure, if any
  std::string stopped_because;  // fail_reason's reason, when it stopped the run
  // Each d_ff study's race (spec.measure.race), after the pass; empty for
  // the model backend, a spec without d_ff studies, or races disabled.
  std::vector<StudyRaceReport> races;
  // An adaptive plan's account of each d_ff study: what it timed, in how
  // many rounds, and its measured leader ("plan adaptive: dff hidden=4096
  // …: timed 33 of 257 candidates (66 of 514 GEMMs) in 2 rounds; leader …").
  std::vector<std::string> plan_notes;
  // A revalidation (spec.revalidate): the GEMMs re-timed with their stored
  // algorithms, those searched in full (no other software version had
  // stored them), and the comparison of this run against the newest run of
  // each GEMM on this GPU model under another software version
  // (answers/compare.h), as lines.
  struct Revalidation {
    int64_t retimed = 0;
    int64_t searched = 0;
    std::vector<std::string> lines;
  };
  std::optional<Revalidation> revalidation;
};

// The longest a prediction waits for its batch's commit [s].
inline constexpr double kPredictionBatchSeconds = 0.2;

// Stored algorithms a revalidation re-times per GEMM (beside the library's
// first choice now).
inline constexpr int kRevalidateAlgos = 3;

// Finds this spec's unfinished job (same spec text, backend and target) and
// resumes it, or creates one; with spec.adaptive, runs the GEMMs outside
// the d_ff studies, then the studies' adaptive plan round by round (GEMMs
// already stored count with their stored time; the job's total grows with
// what the plan decides to time; InvalidArgument "plan: …" for a backend
// that does not measure); skips GEMMs the store already holds (unless
// force); writes each result (a backend that only predicts: each batch of
// results, SweepOptions::prediction_batch) and the job's progress in one
// transaction.
// The job ends "done", "failed" (some GEMMs failed; the rest are kept) or
// "cancelled". Then, when the job is done, the backend measures and can race
// (measure/set_racer.h) and spec.measure.race is enabled, each d_ff study's
// leading candidates are raced and the races stored (SweepOutcome::races;
// a race's failure is reported there and leaves the job done). Errors of
// the store end the run and are returned; the job stays "running" so that
// the next run resumes it.
absl::StatusOr<SweepOutcome> RunSweep(const SweepSpec& spec, tuner::Backend& backend,
                                      store::Store& db, const SweepOptions& options);

// OK, or InvalidArgument "plan: …" for an adaptive spec on a backend that
// does not measure (`measures` false), "revalidate: …" for a revalidation
// there: RunSweep's check, which crestd makes when a job is submitted.
absl::Status CheckPlan(const SweepSpec& spec, bool measures);

}  // namespace crest::sweep
