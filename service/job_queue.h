// Internal to crestd: the job queue. Jobs live in the store (state, plan
// size, progress, priority); this class keeps the runnable ones in memory,
// one lane per place a sweep runs (the analytic model on the CPU, or one
// CUDA device), and one runner thread per lane, so jobs never share a GPU.
//
// Order in a lane: larger priority first, then submission order. A running
// job is never pre-empted: it is cancelled between GEMMs (CancelJob) or,
// when the daemon stops, interrupted between GEMMs and left "queued" so the
// next crestd resumes it. On start, this host's queued and running jobs are
// queued again (a crashed daemon's running job resumes where it stopped).
//
// Watchers receive coalesced events: a watcher slower than the runner sees
// the newest state and every result, never a stale backlog of states.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/common/env.h"
#include "crest/store/job_store.h"
#include "crest/store/records.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/sweep/sweep_report.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/source.h"
#include "crest/v1/crest.pb.h"

namespace crest::store {
class Store;          // crest/store/store.h: the queue's own files use it
struct StoreOptions;  // crest/store/store.h
}  // namespace crest::store

namespace crest::service {

class StorePool;  // store_pool.h: whoever makes a queue has one

// One GEMM's result, as events carry it.
struct JobResult {
  tuner::GemmShape gemm;
  tuner::Source source = tuner::Source::kPredicted;
  double time_us = 0;
  double tflops = 0;
};

struct JobEventData {
  store::JobRecord job;
  sweep::SweepProgress progress;   // this run of the job: counts, times, accounting
  std::string message;             // in words: "queued", "resumed", "cancelled", …
  std::vector<JobResult> results;  // results since the watcher's previous event
  std::vector<std::string> news;   // lines of news (a race starting, its standings)
  bool final = false;              // the job reached done, failed or cancelled
  // The final event of a run that reached its end: the sweep's report, as
  // `crest sweep --db` prints it, made once for the wire (shared: every
  // watcher gets the event).
  std::shared_ptr<const v1::SweepSummary> summary;
};

class JobWatcher {
 public:
  virtual ~JobWatcher() = default;
  // Called with the queue's watcher lock held: must not call back into the
  // queue, and should return quickly.
  virtual void OnJobEvent(const JobEventData& event) = 0;
  // The queue is stopping (or the job vanished): no more events.
  virtual void OnJobClosed(const absl::Status& why) = 0;
};

// Where jobs run. Model jobs all go to the one "model" lane; measuring jobs
// to the lane of a device.
struct Lane {
  std::string name;       // "model" or "cuda:0", …
  std::string backend;    // "model" or "cublaslt"
  std::string target;     // device UUID for cublaslt lanes; empty for model
  std::string gpu_model;  // catalogue name of the device, for cublaslt lanes
  int device = -1;        // CUDA device index, for cublaslt lanes
};

struct JobQueueOptions {
  std::string db_path;
  std::vector<Lane> lanes;              // must include a "model" lane
  int64_t max_gemms_per_job = 200'000;  // a larger plan is refused (INVALID_ARGUMENT)
  int max_queued_per_client = 32;       // queued jobs per client (RESOURCE_EXHAUSTED)
  std::string host;                     // this node's name (jobs of other hosts are not run)
  Env* env = nullptr;                   // the stores' clock; nullptr = DefaultEnv()
  // The lanes' database may not grow past this many pages (0: no cap). A job
  // whose writes find the disk or this cap full is paused, not failed: it
  // goes back to the queue, its lane waits `full_retry_s`, then tries again.
  int64_t max_db_pages = 0;
  double full_retry_s = 30;
  // A job running longer than this fails between two GEMMs, saying so (its
  // results so far are kept; resubmitting it runs the rest). 0: no budget.
  double max_job_seconds = 86'400;
  // Opens the queue's job store, its one writer of jobs; empty: a Store at
  // db_path (as the lanes open theirs). Tests give a fake.
  std::function<absl::StatusOr<std::unique_ptr<store::JobStore>>()> open_job_store;
  // false: jobs are queued, cancelled and listed, but no lane runner takes
  // them (tests of the queue's own bookkeeping, over a fake job store).
  bool run_lanes = true;
  // Makes the backend a job runs on in `lane`.
  std::function<absl::StatusOr<std::unique_ptr<tuner::Backend>>(const Lane& lane,
                                                                const sweep::SweepSpec& spec)>
      make_backend;
  // Told about every job that ends, every result written and the time each
  // GEMM spent inside the backend (metrics). Called from the lane's runner.
  std::function<void(const store::JobRecord&)> on_job_end;
  std::function<void(const Lane&, const JobResult&)> on_result;
  std::function<void(const Lane&, double seconds)> on_busy;
};

struct SubmitRequest {
  std::string spec_json;
  std::string backend;  // "model", "cublaslt" or empty (the default)
  int priority = 0;
  bool force = false;
  std::string client;  // who submits: recorded as the job's submitter, and the per-client limit
};

struct Submitted {
  store::JobRecord job;
  bool created = false;  // false: the same sweep was already on its way, and this is it
};

// Who asks to cancel. Without the right to cancel any job, a caller cancels
// only the jobs it submitted.
struct Canceller {
  std::string name;
  bool may_cancel_any = false;
};

class JobQueue final {
 public:
  JobQueue(JobQueueOptions options, StorePool& pool);
  ~JobQueue();  // Stop()s

  // Queues this host's unfinished jobs again and starts the runners.
  absl::Status Start();
  // Refuses new jobs, interrupts running ones between GEMMs (left queued),
  // joins the runners and closes every watcher with UNAVAILABLE.
  void Stop();

  // Validates and queues a job. An identical spec already queued or running
  // on the same backend and target is returned instead of a second job.
  absl::StatusOr<Submitted> Submit(const SubmitRequest& request);
  // PermissionDenied when `who` may not cancel the job (another's, and `who`
  // may not cancel any); FailedPrecondition when it has ended.
  absl::StatusOr<store::JobRecord> Cancel(int64_t id, const Canceller& who);
  // Cancels job `id` for a watcher that is leaving, only when no other
  // watcher waits on it (checked and done under the watchers' lock, so no
  // one attaches between). True when it was cancelled.
  bool CancelIfOnlyWatcher(int64_t id, const JobWatcher* leaving);
  absl::StatusOr<store::JobRecord> Get(int64_t id);
  absl::StatusOr<std::vector<store::JobRecord>> List(const store::JobStore::JobListing& listing);

  // Registers a watcher of job `id` and sends it the job's current state at
  // once (final already when the job has ended). NotFound for no such job.
  absl::Status Watch(int64_t id, JobWatcher* watcher);
  void Unwatch(int64_t id, JobWatcher* watcher);

  int64_t QueuedCount() const;
  int64_t RunningCount() const;
  std::string DefaultBackend() const;

 private:
  struct Queued {
    int priority;
    int64_t id;
    bool operator<(const Queued& o) const {
      return priority != o.priority ? priority > o.priority : id < o.id;
    }
  };
  struct LaneState {
    Lane lane;
    std::set<Queued> queue;           // GUARDED_BY(mutex_)
    int64_t running = 0;              // job id; 0 when idle
    std::atomic<bool> cancel{false};  // the running job's cancel flag
    std::thread thread;
  };

  // What every store the queue opens shares: this node's host name, the clock.
  store::StoreOptions StoreOptionsOf() const;
  // options_.open_job_store's, or a Store at db_path.
  absl::StatusOr<std::unique_ptr<store::JobStore>> OpenJobStore() const;
  void RunLane(LaneState* lane);
  // Expands the job's plan from its stored spec and runs it; true when the
  // job was paused because the disk or database is full.
  bool RunJob(LaneState* lane, store::Store& db, const store::JobRecord& job, bool force);
  absl::StatusOr<LaneState*> LaneFor(const std::string& backend, const sweep::SweepSpec& spec,
                                     std::string* target);
  LaneState* LaneOfJob(const store::JobRecord& job);
  void Publish(JobEventData event);
  void Enqueue(LaneState* lane, const store::JobRecord& job);  // mutex_ held
  // Marks a job failed and tells its watchers (a final event).
  void Fail(store::Store& db, const store::JobRecord& job, const std::string& why);
  // Tells a job's watchers how its run ended (a final event).
  void ReportEnd(const sweep::SweepReport& report);
  // Puts a job whose writes found no space back in the queue, saying why.
  void Pause(LaneState* lane, store::Store& db, const store::JobRecord& job,
             const absl::Status& why);
  // The job leaves the queue's bookkeeping: client counts, force. mutex_ held.
  void ForgetQueued(int64_t id);
  bool Stopping() const;  // takes mutex_
  // RESOURCE_EXHAUSTED when `client` has its limit of queued jobs; takes mutex_.
  absl::Status CheckClientRoom(const std::string& client) const;

  JobQueueOptions options_;
  StorePool& pool_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> interrupt_{false};
  std::vector<std::unique_ptr<LaneState>> lanes_;
  std::map<std::string, std::set<int64_t>> queued_by_client_;  // GUARDED_BY(mutex_)
  std::set<int64_t> forced_;  // queued jobs submitted with force; GUARDED_BY(mutex_)

  // Submit's and Cancel's database writes hold this, not mutex_: the
  // runners take mutex_ to pick jobs, and SQLite may make a writer wait
  // while a sweep writes. A lane's runner passes through it after each
  // commit (outside any transaction: a measured GEMM, or a batch of
  // predictions), so a queue write waits for at most one commit, never
  // polls SQLite's lock against a sweep that commits many times a second.
  std::mutex db_gate_;
  std::unique_ptr<store::JobStore> writer_;  // GUARDED_BY(db_gate_)

  // Recursive: a watcher may unwatch from inside its own callback.
  std::recursive_mutex watch_mutex_;
  std::map<int64_t, std::vector<JobWatcher*>> watchers_;  // GUARDED_BY(watch_mutex_)
};

}  // namespace crest::service
