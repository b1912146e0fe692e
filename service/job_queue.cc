#include "job_queue.h"

#include <chrono>

#include "crest/common/str_cat.h"
#include "crest/store/store.h"
#include "crest/sweep/runner.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/wire/sweep_summary.h"
#include "log.h"
#include "server_paths.h"
#include "store_pool.h"

namespace crest::service {
namespace {

bool Ended(store::JobState state) {
  return state == store::JobState::kDone || state == store::JobState::kFailed ||
         state == store::JobState::kCancelled;
}

JobResult ResultOf(const tuner::GemmShape& gemm, const tuner::GemmOutcome& outcome) {
  JobResult r;
  r.gemm = gemm;
  if (outcome.predicted) {
    r.time_us = outcome.predicted->time_us;
    r.tflops = outcome.predicted->tflops;
  } else if (outcome.measured) {
    r.source = tuner::Source::kMeasured;
    for (const auto& algo : outcome.measured->algos) {  // the fastest verified algorithm
      if (!algo.verified) continue;
      if (r.time_us == 0 || algo.stats.median_us < r.time_us) {
        r.time_us = algo.stats.median_us;
        r.tflops = algo.tflops;
      }
    }
  }
  return r;
}

}  // namespace

JobQueue::JobQueue(JobQueueOptions options, StorePool& pool)
    : options_(std::move(options)), pool_(pool) {
  for (const auto& lane : options_.lanes) {
    auto state = std::make_unique<LaneState>();
    state->lane = lane;
    lanes_.push_back(std::move(state));
  }
}

JobQueue::~JobQueue() { Stop(); }

std::string JobQueue::DefaultBackend() const {
  for (const auto& l : lanes_) {
    if (l->lane.backend == "cublaslt") return "cublaslt";
  }
  return "model";
}

store::StoreOptions JobQueue::StoreOptionsOf() const {
  store::StoreOptions options;
  if (!options_.host.empty()) options.host = options_.host;
  options.env = options_.env;
  return options;
}

absl::StatusOr<std::unique_ptr<store::JobStore>> JobQueue::OpenJobStore() const {
  if (options_.open_job_store) return options_.open_job_store();
  auto writer = store::Store::Open(options_.db_path, StoreOptionsOf());
  if (!writer.ok()) return writer.status();
  return std::unique_ptr<store::JobStore>(std::move(*writer));
}

absl::Status JobQueue::Start() {
  auto writer = OpenJobStore();
  if (!writer.ok()) return writer.status();
  std::lock_guard<std::mutex> lock(mutex_);
  writer_ = std::move(*writer);
  for (const auto state : {store::JobState::kRunning, store::JobState::kQueued}) {
    auto jobs = writer_->ListJobs({.state = state});
    if (!jobs.ok()) return jobs.status();
    for (const auto& job : *jobs) {
      if (job.host != options_.host) continue;
      LaneState* lane = LaneOfJob(job);
      if (lane == nullptr) {
        const std::string why =
            StrCat("not resumed: this node has no ", job.backend, " lane for target ", job.target);
        if (auto s = writer_->UpdateJob(job.id, store::JobState::kFailed, job.total, job.done, why);
            !s.ok()) {
          return s;
        }
        Log(Level::kWarn, "job_not_resumed", {{"job", std::to_string(job.id)}, {"why", why}});
        continue;
      }
      Enqueue(lane, job);
      Log(Level::kInfo, "job_requeued",
          {{"job", std::to_string(job.id)},
           {"was", std::string(store::JobStateName(job.state))},
           {"done", StrCat(job.done, "/", job.total)}});
    }
  }
  if (!options_.run_lanes) return absl::OkStatus();
  for (auto& lane : lanes_) {
    LaneState* l = lane.get();
    l->thread = std::thread([this, l] { RunLane(l); });
  }
  return absl::OkStatus();
}

void JobQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    interrupt_ = true;
  }
  wake_.notify_all();
  for (auto& lane : lanes_) {
    if (lane->thread.joinable()) lane->thread.join();
  }
  std::map<int64_t, std::vector<JobWatcher*>> watchers;
  {
    std::lock_guard<std::recursive_mutex> lock(watch_mutex_);
    watchers.swap(watchers_);
    for (auto& [id, list] : watchers) {
      for (JobWatcher* w : list) {
        w->OnJobClosed(absl::UnavailableError(
            StrCat("crestd is shutting down; job ", id,
                   " is kept and, if unfinished, resumes when crestd starts again")));
      }
    }
  }
  std::lock_guard<std::mutex> gate(db_gate_);
  writer_.reset();
}

void JobQueue::Enqueue(LaneState* lane, const store::JobRecord& job) {
  lane->queue.insert(Queued{job.priority, job.id});
}

void JobQueue::ForgetQueued(int64_t id) {
  // A client with nothing queued is forgotten: client names (peer addresses
  // without a token) would otherwise pile up over months.
  for (auto it = queued_by_client_.begin(); it != queued_by_client_.end();) {
    it->second.erase(id);
    it = it->second.empty() ? queued_by_client_.erase(it) : std::next(it);
  }
  forced_.erase(id);
}

JobQueue::LaneState* JobQueue::LaneOfJob(const store::JobRecord& job) {
  for (auto& l : lanes_) {
    if (l->lane.backend != job.backend) continue;
    if (job.backend == "model" || l->lane.target == job.target) return l.get();
  }
  return nullptr;
}

absl::StatusOr<JobQueue::LaneState*> JobQueue::LaneFor(const std::string& backend,
                                                       const sweep::SweepSpec& spec,
                                                       std::string* target) {
  if (backend == "model") {
    if (auto s = sweep::CheckPlan(spec, /*measures=*/false); !s.ok()) return s;
    if (spec.gpu.empty()) {
      return absl::InvalidArgumentError(
          "spec.gpu: the model backend needs a target GPU (\"gpu\" in the spec)");
    }
    auto gpu = tuner::FindGpu(spec.gpu);
    if (!gpu.ok()) return absl::InvalidArgumentError(StrCat("spec.gpu: ", gpu.status().message()));
    *target = std::string((*gpu)->name);
    for (auto& l : lanes_) {
      if (l->lane.backend == "model") return l.get();
    }
    return absl::FailedPreconditionError("backend: this crestd runs no model lane");
  }
  if (backend == "replay") {
    return absl::InvalidArgumentError(
        "backend: crestd does not run replays (a node's database holds its GPU's "
        "measurements); run `crest sweep --backend replay --db FILE` locally");
  }
  if (backend != "cublaslt") {
    return absl::InvalidArgumentError(
        StrCat("backend: unknown backend '", backend, "' (expected model or cublaslt)"));
  }
  std::string wanted;
  if (!spec.gpu.empty()) {
    auto gpu = tuner::FindGpu(spec.gpu);
    if (gpu.ok()) wanted = std::string((*gpu)->name);
  }
  LaneState* chosen = nullptr;
  for (auto& l : lanes_) {
    if (l->lane.backend != "cublaslt") continue;
    if (chosen == nullptr) chosen = l.get();
    if (!wanted.empty() && l->lane.gpu_model == wanted) {
      chosen = l.get();
      break;
    }
  }
  if (chosen == nullptr) {
    return absl::FailedPreconditionError(
        "backend: cublaslt needs a CUDA device, and this node has none (submit with backend "
        "\"model\" for predictions)");
  }
  *target = chosen->lane.target;
  return chosen;
}

absl::StatusOr<Submitted> JobQueue::Submit(const SubmitRequest& request) {
  if (request.spec_json.empty()) {
    return absl::InvalidArgumentError("spec: empty; give a sweep spec (docs/sweep-spec.md)");
  }
  // The plan is refused over the per-job limit while it is expanded, never
  // built whole first.
  auto spec =
      sweep::ParseSweepSpec(request.spec_json, {options_.max_gemms_per_job, "--max-job-gemms"});
  if (!spec.ok()) return spec.status();
  if (spec->gemms.empty()) {
    return absl::InvalidArgumentError("spec: the plan holds no GEMMs");
  }
  const auto gemms = static_cast<int64_t>(spec->gemms.size());
  const std::string backend = request.backend.empty() ? DefaultBackend() : request.backend;
  std::string target;
  auto lane = LaneFor(backend, *spec, &target);
  if (!lane.ok()) return lane.status();

  // The database's part under the gate, never under mutex_ (job_queue.h).
  std::lock_guard<std::mutex> gate(db_gate_);
  if (Stopping()) {  // Stop() sets it before it lets the writer go
    return absl::UnavailableError("crestd is shutting down; submit again later");
  }
  auto existing = writer_->FindJob(spec->canonical_json, backend, target);
  if (existing.ok() && !request.force &&
      (existing->state == store::JobState::kQueued ||
       existing->state == store::JobState::kRunning)) {
    return Submitted{*existing, false};  // the same sweep is already on its way
  }
  if (auto s = CheckClientRoom(request.client); !s.ok()) return s;
  store::JobRecord job;
  job.spec = spec->canonical_json;
  job.backend = backend;
  job.target = target;
  job.state = store::JobState::kQueued;
  job.total = gemms;
  job.priority = request.priority;
  job.submitted_by = request.client;
  auto created = writer_->CreateJob(job);
  if (!created.ok()) return created.status();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Enqueue(*lane, *created);
    // The plan is not kept: a queued job holds its id, and its spec stays in
    // the database until the lane expands it again to run it, so a queue of
    // 200,000-GEMM jobs costs no more memory than one of small ones.
    queued_by_client_[request.client].insert(created->id);
    if (request.force) forced_.insert(created->id);
  }
  wake_.notify_all();
  Log(Level::kInfo, "job_queued",
      {{"job", std::to_string(created->id)},
       {"backend", backend},
       {"target", target},
       {"gemms", std::to_string(gemms)},
       {"priority", std::to_string(request.priority)},
       {"client", request.client}});
  return Submitted{*created, true};
}

bool JobQueue::Stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

absl::Status JobQueue::CheckClientRoom(const std::string& client) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto mine = queued_by_client_.find(client);
  const size_t queued = mine == queued_by_client_.end() ? 0 : mine->second.size();
  if (static_cast<int>(queued) < options_.max_queued_per_client) return absl::OkStatus();
  return absl::ResourceExhaustedError(StrCat("client '", client, "' already has ", queued,
                                             " queued jobs, the limit (--max-queued-per-client ",
                                             options_.max_queued_per_client,
                                             "); wait for some to start or cancel them"));
}

bool JobQueue::CancelIfOnlyWatcher(int64_t id, const JobWatcher* leaving) {
  std::lock_guard<std::recursive_mutex> lock(watch_mutex_);
  if (auto it = watchers_.find(id); it != watchers_.end()) {
    for (const JobWatcher* w : it->second) {
      if (w != leaving) return false;  // someone else waits on it
    }
  }
  return Cancel(id, Canceller{"", true}).ok();
}

absl::StatusOr<store::JobRecord> JobQueue::Cancel(int64_t id, const Canceller& who) {
  std::unique_lock<std::mutex> gate(db_gate_);  // not mutex_: job_queue.h
  if (Stopping()) return absl::UnavailableError("crestd is shutting down");
  auto job = writer_->GetJob(id);
  if (!job.ok()) return job.status();
  if (!who.may_cancel_any && job->submitted_by != who.name) {
    return absl::PermissionDeniedError(
        StrCat("job ", id, " was submitted by '", job->submitted_by, "', not by '", who.name,
               "'; only its submitter or an operator (a token with the operator role) may "
               "cancel it"));
  }
  if (Ended(job->state)) {
    return absl::FailedPreconditionError(
        StrCat("job ", id, " has already ended (", store::JobStateName(job->state), ")"));
  }
  bool was_queued = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& l : lanes_) {
      if (l->running == id) {
        l->cancel = true;  // the runner stops before its next GEMM and publishes the end
        Log(Level::kInfo, "job_cancelling", {{"job", std::to_string(id)}});
        return *job;
      }
    }
    for (auto& l : lanes_) was_queued |= l->queue.erase(Queued{job->priority, id}) > 0;
    ForgetQueued(id);
  }
  if (!was_queued) {  // a runner may have taken it, and ended it, since it was read
    job = writer_->GetJob(id);
    if (!job.ok()) return job.status();
    if (Ended(job->state)) {
      return absl::FailedPreconditionError(
          StrCat("job ", id, " has already ended (", store::JobStateName(job->state), ")"));
    }
  }
  if (auto s = writer_->UpdateJob(id, store::JobState::kCancelled, job->total, job->done,
                                  "cancelled before it started");
      !s.ok()) {
    return s;
  }
  auto cancelled = writer_->GetJob(id);
  gate.unlock();
  if (!cancelled.ok()) return cancelled.status();
  Log(Level::kInfo, "job_cancelled", {{"job", std::to_string(id)}});
  JobEventData event;
  event.job = *cancelled;
  event.message = "cancelled before it started";
  event.final = true;
  Publish(std::move(event));
  if (options_.on_job_end) options_.on_job_end(*cancelled);
  return *cancelled;
}

absl::StatusOr<store::JobRecord> JobQueue::Get(int64_t id) {
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  return (*db)->GetJob(id);
}

absl::StatusOr<std::vector<store::JobRecord>> JobQueue::List(
    const store::JobStore::JobListing& listing) {
  auto db = pool_.Acquire();
  if (!db.ok()) return db.status();
  return (*db)->ListJobs(listing);
}

int64_t JobQueue::QueuedCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (const auto& l : lanes_) n += static_cast<int64_t>(l->queue.size());
  return n;
}

int64_t JobQueue::RunningCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t n = 0;
  for (const auto& l : lanes_) n += l->running != 0 ? 1 : 0;
  return n;
}

absl::Status JobQueue::Watch(int64_t id, JobWatcher* watcher) {
  std::lock_guard<std::recursive_mutex> lock(watch_mutex_);
  auto job = Get(id);  // read under the lock: no event can slip between
  if (!job.ok()) return job.status();
  JobEventData event;
  event.job = *job;
  event.final = Ended(job->state);
  event.message = std::string(store::JobStateName(job->state));
  if (!event.final) watchers_[id].push_back(watcher);
  watcher->OnJobEvent(event);
  return absl::OkStatus();
}

void JobQueue::Unwatch(int64_t id, JobWatcher* watcher) {
  std::lock_guard<std::recursive_mutex> lock(watch_mutex_);
  auto it = watchers_.find(id);
  if (it == watchers_.end()) return;
  std::erase(it->second, watcher);
  if (it->second.empty()) watchers_.erase(it);
}

void JobQueue::Publish(JobEventData event) {
  std::lock_guard<std::recursive_mutex> lock(watch_mutex_);
  auto it = watchers_.find(event.job.id);
  if (it == watchers_.end()) return;
  // A watcher may finish, and unwatch, inside its callback.
  const std::vector<JobWatcher*> list = it->second;
  for (JobWatcher* w : list) w->OnJobEvent(event);
  if (event.final) watchers_.erase(event.job.id);
}

void JobQueue::Fail(store::Store& db, const store::JobRecord& job, const std::string& why) {
  Log(Level::kWarn, "job_failed", {{"job", std::to_string(job.id)}, {"error", why}});
  (void)db.UpdateJob(job.id, store::JobState::kFailed, job.total, job.done, why);
  JobEventData event;
  event.job = job;
  if (auto j = db.GetJob(job.id); j.ok()) event.job = *j;
  event.message = why;
  event.final = true;
  if (options_.on_job_end) options_.on_job_end(event.job);
  Publish(std::move(event));
}

void JobQueue::ReportEnd(const sweep::SweepReport& report) {
  const sweep::SweepOutcome& outcome = report.outcome;
  const std::string id = std::to_string(outcome.job.id);
  JobEventData event;
  event.job = outcome.job;
  event.progress = outcome.progress;
  event.message = outcome.job.error.empty() ? std::string(store::JobStateName(outcome.job.state))
                                            : outcome.job.error;
  event.final = true;
  Log(Level::kInfo, "job_ended",
      {{"job", id},
       {"state", std::string(store::JobStateName(outcome.job.state))},
       {"done", StrCat(outcome.job.done, "/", outcome.job.total)},
       {"new_results", std::to_string(outcome.progress.new_results)},
       {"elapsed_s", std::to_string(outcome.progress.elapsed_s)}});
  if (options_.on_job_end) options_.on_job_end(outcome.job);
  auto summary = std::make_shared<v1::SweepSummary>();
  wire::Fill(report, summary.get());
  summary->set_first_error(WithoutServerPaths(summary->first_error()));
  event.summary = std::move(summary);
  Publish(std::move(event));
}

void JobQueue::Pause(LaneState* lane, store::Store& db, const store::JobRecord& job,
                     const absl::Status& why) {
  const std::string message = StrCat("paused: ", why.message(), "; tried again every ",
                                     options_.full_retry_s, " s, it resumes when space returns");
  Log(Level::kWarn, "job_paused", {{"job", std::to_string(job.id)}, {"error", message}});
  store::JobRecord now = job;
  if (auto j = db.GetJob(job.id); j.ok()) now = *j;
  // May fail for the same lack of space: the job then stays "running" in the
  // database, which the next start resumes as well.
  (void)db.UpdateJob(job.id, store::JobState::kQueued, now.total, now.done, message);
  now.state = store::JobState::kQueued;
  now.error = message;
  JobEventData event;
  event.job = now;
  event.message = message;
  Publish(std::move(event));
  std::lock_guard<std::mutex> lock(mutex_);
  Enqueue(lane, now);
}

void JobQueue::RunLane(LaneState* lane) {
  store::StoreOptions options = StoreOptionsOf();
  options.max_pages = options_.max_db_pages;
  std::unique_ptr<store::Store> db;
  while (true) {
    int64_t id = 0;
    bool force = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !lane->queue.empty(); });
      if (stopping_) return;
      id = lane->queue.begin()->id;
      lane->queue.erase(lane->queue.begin());
      force = forced_.contains(id);
      ForgetQueued(id);
      lane->running = id;
      lane->cancel = false;
    }
    if (db == nullptr) {
      auto opened = store::Store::Open(options_.db_path, options);
      if (opened.ok()) {
        db = std::move(*opened);
      } else {
        Log(Level::kError, "lane_store_error",
            {{"lane", lane->lane.name}, {"message", std::string(opened.status().message())}});
      }
    }
    bool paused = false;
    if (db != nullptr) {
      auto job = db->GetJob(id);
      if (job.ok()) paused = RunJob(lane, *db, *job, force);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    lane->running = 0;
    if (paused) {
      wake_.wait_for(lock, std::chrono::duration<double>(options_.full_retry_s),
                     [&] { return stopping_; });
    }
  }
}

bool JobQueue::RunJob(LaneState* lane, store::Store& db, const store::JobRecord& job, bool force) {
  const std::string id = std::to_string(job.id);
  const auto fail = [&](const std::string& why) { Fail(db, job, why); };
  // The plan is expanded here, when the job runs (Submit keeps none).
  auto parsed = sweep::ParseSweepSpec(job.spec, {options_.max_gemms_per_job, "--max-job-gemms"});
  if (!parsed.ok()) {
    fail(StrCat("spec: ", parsed.status().message()));
    return false;
  }
  const sweep::SweepSpec& spec = *parsed;
  auto backend = options_.make_backend(lane->lane, spec);
  if (!backend.ok()) {
    fail(std::string(backend.status().message()));
    return false;
  }

  Log(Level::kInfo, "job_started",
      {{"job", id},
       {"lane", lane->lane.name},
       {"done", StrCat(job.done, "/", job.total)},
       {"resumed", job.done > 0 || job.state == store::JobState::kRunning ? "true" : "false"}});
  store::JobRecord live = job;
  live.state = store::JobState::kRunning;
  std::vector<JobResult> results;  // written since the last event
  double last_busy = 0;
  sweep::SweepOptions run;
  run.job_id = job.id;
  run.env = options_.env;
  run.force = force;
  run.cancel = &lane->cancel;
  run.interrupt = &interrupt_;
  // The job's wall-time budget, checked between GEMMs: past it, the runner
  // stops and leaves the job failed, saying why.
  const Env& clock = options_.env != nullptr ? *options_.env : DefaultEnv();
  const double started_at = clock.MonotonicSeconds();
  if (options_.max_job_seconds > 0) {
    run.fail_reason = [&]() -> std::string {
      if (clock.MonotonicSeconds() - started_at <= options_.max_job_seconds) return "";
      return StrCat("ran past its wall-time budget of ", options_.max_job_seconds,
                    " s (--max-job-seconds)");
    };
  }
  run.on_result = [&](const tuner::GemmShape& gemm, const tuner::GemmOutcome& outcome) {
    results.push_back(ResultOf(gemm, outcome));
    if (options_.on_result) options_.on_result(lane->lane, results.back());
    { std::lock_guard<std::mutex> gate(db_gate_); }  // a waiting queue write goes first
  };
  run.on_progress = [&](const sweep::SweepProgress& p) {
    if (options_.on_busy) options_.on_busy(lane->lane, p.busy_s - last_busy);
    last_busy = p.busy_s;
    live.done = p.done;
    live.total = p.total;
    JobEventData event;
    event.job = live;
    event.progress = p;
    event.message = "running";
    event.results.swap(results);
    Publish(std::move(event));
  };
  // The races after the pass: their start and their standings, as news.
  run.on_stage = [&](std::string_view line) {
    JobEventData event;
    event.job = live;
    event.message = "running";
    event.news = {std::string(line)};
    Publish(std::move(event));
  };
  {
    JobEventData started;
    started.job = live;
    started.message = job.done > 0 ? "resumed" : "started";
    Publish(std::move(started));
  }
  auto outcome = sweep::RunSweep(spec, **backend, db, run);
  if (absl::IsResourceExhausted(outcome.status())) {  // the disk or --max-db-bytes is full
    Pause(lane, db, job, outcome.status());
    return true;
  }
  if (!outcome.ok()) {
    fail(std::string(outcome.status().message()));
    return false;
  }

  if (outcome->interrupted) {
    Log(Level::kInfo, "job_interrupted",
        {{"job", id}, {"done", StrCat(outcome->job.done, "/", outcome->job.total)}});
    return false;  // Stop() closes the watchers; the job resumes at the next start
  }
  if (!outcome->races.empty() || !outcome->plan_notes.empty() || outcome->revalidation) {
    JobEventData event;
    event.job = live;
    event.message = "running";
    event.news = outcome->plan_notes;  // an adaptive plan's account of each study
    if (outcome->revalidation) {       // a revalidation's count and its comparison old vs new
      for (const std::string& line : outcome->revalidation->lines) event.news.push_back(line);
    }
    for (const sweep::StudyRaceReport& race : outcome->races) {
      event.news.push_back(sweep::DescribeRace(race));
      Log(Level::kInfo, "job_race",
          {{"job", id},
           {"study", race.study},
           {"race", std::to_string(race.race_id)},
           {"summary", event.news.back()}});
    }
    Publish(std::move(event));
  }
  ReportEnd(sweep::ReportOf(*std::move(outcome), spec, **backend));
  return false;
}

}  // namespace crest::service
