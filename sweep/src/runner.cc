#include "crest/sweep/runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>

#include "crest/answers/compare.h"
#include "crest/common/str_cat.h"
#include "crest/measure/retimer.h"
#include "crest/sweep/spec_studies.h"
#include "crest/tuner/adaptive_plan.h"
#include "study_races.h"

namespace crest::sweep {
namespace {

// What the store needs to know about one backend's results.
class ResultWriter {
 public:
  ResultWriter(tuner::Backend& backend, store::Store& db) : backend_(backend), db_(db) {}

  absl::Status Prepare() {
    if (!backend_.Measures()) return absl::OkStatus();
    tuner::DeviceInfo device = backend_.Device();
    device.gpu_model = std::string(backend_.Gpu().name);
    auto ids = db_.RegisterDevice(device, backend_.Software());
    if (!ids.ok()) return ids.status();
    device_id_ = ids->first;
    software_id_ = ids->second;
    sm_count_ = device.sm_count > 0 ? device.sm_count : backend_.Gpu().sm_count;
    return absl::OkStatus();
  }

  int64_t device_id() const { return device_id_; }
  int64_t software_id() const { return software_id_; }

  std::string Target() const {
    return backend_.Measures() ? backend_.Device().uuid : std::string(backend_.Gpu().name);
  }

  absl::StatusOr<bool> Has(const tuner::GemmShape& g) {
    const auto key = store::GemmKey::Of(g);
    if (backend_.Measures())
      return db_.HasMeasurement(device_id_, software_id_, key, backend_.Mode());
    return db_.HasPrediction(std::string(backend_.Gpu().name),
                             tuner::ModelVersionFor(backend_.Gpu(), g.dtype), key);
  }

  // Writes a batch of results (BatchSize of them at most) and the job's
  // progress; returns how many rows they added (a prediction another
  // writer added since the plan was checked adds none). A measurement is
  // its own transaction; predictions share one.
  absl::StatusOr<int64_t> Write(
      int64_t job_id, std::span<const std::pair<tuner::GemmShape, tuner::GemmOutcome>> results) {
    if (backend_.Measures()) {
      for (const auto& [g, outcome] : results) {
        if (!outcome.measured) return NoResult();
        auto s =
            db_.InsertMeasurement(job_id, device_id_, software_id_,
                                  std::string(backend_.Gpu().name), sm_count_, *outcome.measured);
        if (!s.ok()) return s;
      }
      return static_cast<int64_t>(results.size());  // a measurement is always a new run's row
    }
    std::vector<store::PredictionToWrite> batch;
    batch.reserve(results.size());
    for (const auto& [g, outcome] : results) {
      if (!outcome.predicted) return NoResult();
      batch.push_back({&g, &*outcome.predicted});
    }
    return db_.InsertPredictions(job_id, std::string(backend_.Gpu().name), batch);
  }

  // How many results one commit holds.
  size_t BatchSize(const SweepOptions& options) const {
    return backend_.Measures() ? 1 : static_cast<size_t>(std::max(1, options.prediction_batch));
  }

 private:
  absl::Status NoResult() const {
    return absl::InternalError(StrCat("backend ", backend_.Name(), " returned no result"));
  }

  tuner::Backend& backend_;
  store::Store& db_;
  int64_t device_id_ = 0;
  int64_t software_id_ = 0;
  int sm_count_ = 0;
};

}  // namespace

std::string RaceAlgoNote(tuner::AlgoChoice algo) {
  return algo == tuner::AlgoChoice::kDefault ? " (cuBLASLt's first-choice algorithms)" : "";
}

std::string DescribeRace(const StudyRaceReport& race) {
  const std::string algo = RaceAlgoNote(race.algo);
  if (race.race_id == 0) {
    return StrCat("race of ", race.study, algo, ": not raced: ", race.why_not);
  }
  std::vector<std::string> parts;
  for (const tuner::RaceStanding& s : race.result.standings) {
    const int64_t d_ff = race.d_ff[static_cast<size_t>(s.candidate)];
    if (s.verdict == tuner::RaceVerdict::kLeader) {
      parts.push_back(StrCat("leader d_ff ", d_ff, " (", Decimals(s.median_us, 1), " us)"));
      continue;
    }
    parts.push_back(StrCat(tuner::RaceVerdictName(s.verdict), " ", d_ff, " (", Decimals(s.ratio, 4),
                           ", ", Decimals(s.ratio_low, 4), "-", Decimals(s.ratio_high, 4), ")"));
  }
  const measure::StudyRaceResult& r = race.result;
  return StrCat("race ", race.race_id, " of ", race.study, algo, ": ", race.d_ff.size(),
                " candidates of job ", race.raced_job, " ", race.measured_on, "; ", r.rounds,
                " rounds, ", Decimals(r.seconds, 1), " s (warm-up ", Decimals(r.warmup_s, 1),
                " s, ", r.settled ? "settled" : "not settled", "; ", r.retaken,
                " retaken after an idle gap; stopped: ", r.stop_reason,
                "): ", StrJoin(parts, "; "));
}

double SweepProgress::GemmsPerMinute() const {
  return elapsed_s > 0 ? 60.0 * static_cast<double>(new_results + failed) / elapsed_s : 0;
}

double SweepProgress::GpuBusyFraction() const { return elapsed_s > 0 ? kernel_s / elapsed_s : 0; }

SweepProgress::PerGemm SweepProgress::HostPerGemm() const {
  PerGemm out;
  const int64_t run = new_results + failed;
  if (run <= 0) return out;
  const double n = static_cast<double>(run);
  out.host.operands_s = host.operands_s / n;
  out.host.plan_s = host.plan_s / n;
  out.host.graphs_s = host.graphs_s / n;
  out.host.readings_s = host.readings_s / n;
  out.host.verify_s = host.verify_s / n;
  // The keep-load runs beside the host's stages, not between them.
  out.other_engine_s = std::max(0.0, busy_s - (kernel_s - keep_load_s) - host.Total()) / n;
  out.write_s = write_s / n;
  out.between_s = std::max(0.0, elapsed_s - busy_s - write_s) / n;
  out.keep_load_s = keep_load_s / n;
  out.reload_s = reload_s / n;
  return out;
}

double SweepProgress::HostOverheadPerGemmS() const {
  const int64_t run = new_results + failed;
  return run > 0 ? std::max(0.0, elapsed_s - kernel_s) / static_cast<double>(run) : 0;
}

namespace {

bool Stopped(const SweepOptions& options) {
  return (options.cancel != nullptr && options.cancel->load()) ||
         (options.interrupt != nullptr && options.interrupt->load());
}

bool Finished(store::JobState state) {
  return state == store::JobState::kDone || state == store::JobState::kCancelled;
}

// The job this sweep runs under: the one named in options, else an unfinished
// job for the same spec, backend and target (resumed), else a new one.
absl::StatusOr<store::JobRecord> FindOrCreateJob(const SweepSpec& spec,
                                                 const tuner::Backend& backend,
                                                 const std::string& target, store::Store& db,
                                                 const SweepOptions& options, bool* resumed) {
  if (options.job_id) {
    auto job = db.GetJob(*options.job_id);
    if (!job.ok()) return job.status();
    if (job->spec != spec.canonical_json) {
      return absl::InvalidArgumentError(
          StrCat("job ", *options.job_id, " holds a different spec than the one given"));
    }
    if (Finished(job->state)) {
      return absl::FailedPreconditionError(
          StrCat("job ", job->id, " is already ", store::JobStateName(job->state)));
    }
    *resumed = job->state != store::JobState::kQueued || job->done > 0;
    return job;
  }
  auto job = db.FindJob(spec.canonical_json, std::string(backend.Name()), target);
  if (job.ok() && !Finished(job->state)) {
    *resumed = true;
    return job;
  }
  if (!job.ok() && !absl::IsNotFound(job.status())) return job.status();
  store::JobRecord fresh;
  fresh.spec = spec.canonical_json;
  fresh.backend = std::string(backend.Name());
  fresh.target = target;
  fresh.state = store::JobState::kQueued;
  fresh.total = static_cast<int64_t>(spec.gemms.size());
  fresh.priority = options.priority;
  return db.CreateJob(fresh);
}

// Which GEMMs the store already holds (they count as done); none with force.
absl::StatusOr<std::vector<bool>> PresentGemms(std::span<const tuner::GemmShape> gemms,
                                               ResultWriter& writer, bool force) {
  std::vector<bool> present(gemms.size(), false);
  if (force) return present;
  for (size_t i = 0; i < gemms.size(); ++i) {
    auto has = writer.Has(gemms[i]);
    if (!has.ok()) return has.status();
    present[i] = *has;
  }
  return present;
}

std::string DescribeFailure(const tuner::GemmShape& g, const absl::Status& status) {
  return StrCat(g.name, " (m=", g.m, " n=", g.n, " k=", g.k, "): ", status.message());
}

// What became of one GEMM run: its outcome, or the backend's error.
using Seen =
    std::function<void(const tuner::GemmShape&, const absl::StatusOr<tuner::GemmOutcome>&)>;

// How one GEMM is run: the backend's search, or a revalidation's re-timing.
using RunOne = std::function<absl::StatusOr<tuner::GemmOutcome>(const tuner::GemmShape&)>;

// Results waiting for their commit (ResultWriter::BatchSize at a time, and
// at least every kPredictionBatchSeconds); each is reported (on_result,
// then the progress) once committed.
class Committer {
 public:
  Committer(ResultWriter& writer, int64_t job_id, const SweepOptions& options, const Env& env,
            double start, SweepOutcome& out)
      : writer_(writer),
        job_id_(job_id),
        options_(options),
        env_(env),
        start_(start),
        out_(out),
        batch_(writer.BatchSize(options)) {}

  absl::Status Add(const tuner::GemmShape& g, tuner::GemmOutcome outcome) {
    if (waiting_.empty()) first_at_ = env_.MonotonicSeconds();
    waiting_.emplace_back(g, std::move(outcome));
    if (waiting_.size() < batch_ && env_.MonotonicSeconds() - first_at_ < kPredictionBatchSeconds) {
      return absl::OkStatus();
    }
    return Commit();
  }

  absl::Status Commit() {
    if (waiting_.empty()) return absl::OkStatus();
    SweepProgress& p = out_.progress;
    const double writing = env_.MonotonicSeconds();
    auto added = writer_.Write(job_id_, waiting_);
    if (!added.ok()) return added.status();
    p.write_s += env_.MonotonicSeconds() - writing;
    for (const auto& [g, outcome] : waiting_) {
      if (options_.on_result) options_.on_result(g, outcome);
    }
    // Counted as written: two sweeps of one plan into one file each
    // report only the rows they added.
    p.new_results += *added;
    p.done += static_cast<int64_t>(waiting_.size());
    waiting_.clear();
    Report();
    return absl::OkStatus();
  }

  void Report() {
    out_.progress.elapsed_s = env_.MonotonicSeconds() - start_;
    if (options_.on_progress) options_.on_progress(out_.progress);
  }

 private:
  ResultWriter& writer_;
  const int64_t job_id_;
  const SweepOptions& options_;
  const Env& env_;
  const double start_;
  SweepOutcome& out_;
  const size_t batch_;
  std::vector<std::pair<tuner::GemmShape, tuner::GemmOutcome>> waiting_;
  double first_at_ = 0;
};

// Runs every GEMM not present (each by `run_one`, else the backend's Run),
// committing results as Committer batches them; stops early on cancel
// (kCancelled) or interrupt (kQueued), after committing what it has.
// Returns the state to record.
absl::StatusOr<store::JobState> RunMissing(std::span<const tuner::GemmShape> gemms,
                                           const std::vector<bool>& present,
                                           tuner::Backend& backend, ResultWriter& writer,
                                           int64_t job_id, const SweepOptions& options,
                                           const Env& env, double start, SweepOutcome& out,
                                           const Seen& seen = {}, const RunOne& run_one = {}) {
  SweepProgress& p = out.progress;
  Committer committer(writer, job_id, options, env, start, out);
  for (size_t i = 0; i < gemms.size(); ++i) {
    if (present[i]) continue;
    if (Stopped(options)) {
      if (auto s = committer.Commit(); !s.ok()) return s;
      if (options.cancel != nullptr && options.cancel->load()) return store::JobState::kCancelled;
      out.interrupted = true;
      return store::JobState::kQueued;
    }
    if (options.fail_reason) {
      if (std::string why = options.fail_reason(); !why.empty()) {
        if (auto s = committer.Commit(); !s.ok()) return s;
        out.stopped_because = std::move(why);
        return store::JobState::kFailed;
      }
    }
    const tuner::GemmShape& g = gemms[i];
    const double before = env.MonotonicSeconds();
    auto outcome = run_one ? run_one(g) : backend.Run(g);
    p.busy_s += env.MonotonicSeconds() - before;
    if (seen) seen(g, outcome);
    if (!outcome.ok()) {
      ++p.failed;
      if (out.first_error.empty()) out.first_error = DescribeFailure(g, outcome.status());
      committer.Report();
      continue;
    }
    if (outcome->measured) {
      p.kernel_s += outcome->measured->kernel_seconds;
      p.host += outcome->measured->host;
      p.reload_s += outcome->measured->reload_seconds;
      p.keep_load_s += outcome->measured->keep_load_seconds;
    }
    if (auto s = committer.Add(g, *std::move(outcome)); !s.ok()) return s;
  }
  if (auto s = committer.Commit(); !s.ok()) return s;
  return store::JobState::kDone;
}

// A GEMM's time for the adaptive plan: its fastest verified algorithm's
// median; 0 when none verified.
double FastestVerified(const tuner::MeasuredGemm& m) {
  double best = 0;
  for (const tuner::AlgoResult& a : m.algos) {
    if (a.verified && a.stats.median_us > 0 && (best == 0 || a.stats.median_us < best)) {
      best = a.stats.median_us;
    }
  }
  return best;
}

// The stored time of each GEMM this device and software already measured
// in the backend's mode (its latest run's fastest verified algorithm).
absl::StatusOr<std::map<store::GemmKey, double>> StoredTimes(
    std::span<const tuner::GemmShape> gemms, tuner::Backend& backend, ResultWriter& writer,
    store::Store& db) {
  std::vector<store::GemmKey> keys;
  for (const tuner::GemmShape& g : gemms) keys.push_back(store::GemmKey::Of(g));
  auto bests = db.RunBests(std::string(backend.Gpu().name), keys, writer.software_id(),
                           backend.Mode(), tuner::AlgoChoice::kBest);
  if (!bests.ok()) return bests.status();
  std::map<store::GemmKey, double> out;
  for (const auto& [key, runs] : *bests) {
    const store::RunBest* latest = nullptr;
    for (const store::RunBest& b : runs) {
      if (b.run.device_id != writer.device_id()) continue;
      if (latest == nullptr || b.started_us > latest->started_us) latest = &b;
    }
    if (latest != nullptr) out[key] = latest->median_us;
  }
  return out;
}

// `kind`: "measured", or "replayed" for the replay backend's simulated GPU.
std::string DescribePlan(const tuner::DffQuery& study, const tuner::AdaptivePlan::StudyState& s,
                         int rounds, std::string_view kind) {
  std::string out = StrCat("plan adaptive: ", tuner::DffStudyKey(study), ": timed ", s.timed,
                           " of ", s.candidates, " candidates (", s.gemms_timed, " of ", s.gemms,
                           " GEMMs) in ", rounds, " round(s); ");
  if (s.leader == 0) return out + "no candidate was timed whole; the model answers them all";
  return StrCat(out, kind, " leader d_ff ", s.leader, " (", Decimals(s.leader_us, 1),
                " us): no untimed candidate's optimistic bound is below it; the untimed are "
                "answered by the model (predicted)");
}

// The pass's progress before its first GEMM: `count` GEMMs, those
// `present` done; the job says so.
absl::Status BeginPass(int64_t count, const std::vector<bool>& present, store::Store& db,
                       int64_t job_id, SweepOutcome& out) {
  SweepProgress& p = out.progress;
  p.total = count;
  p.done = static_cast<int64_t>(std::count(present.begin(), present.end(), true));
  out.already_present = p.done;
  return db.UpdateJob(job_id, store::JobState::kRunning, p.total, p.done, "");
}

// Marks the GEMMs of `next` the store already holds (present) and gives the
// plan their stored times; counts them done.
absl::StatusOr<std::vector<bool>> TakeStored(const std::vector<tuner::GemmShape>& next,
                                             const std::map<store::GemmKey, bool>& stored,
                                             tuner::AdaptivePlan& plan, tuner::Backend& backend,
                                             ResultWriter& writer, store::Store& db,
                                             SweepOutcome& out) {
  std::vector<bool> here(next.size(), false);
  std::vector<tuner::GemmShape> held;
  for (size_t i = 0; i < next.size(); ++i) {
    const auto it = stored.find(store::GemmKey::Of(next[i]));
    here[i] = it != stored.end() && it->second;
    if (here[i]) held.push_back(next[i]);
  }
  if (held.empty()) return here;
  auto times = StoredTimes(held, backend, writer, db);
  if (!times.ok()) return times.status();
  for (const tuner::GemmShape& g : held) {
    const auto t = times->find(store::GemmKey::Of(g));
    if (t != times->end()) {
      plan.Record(g, t->second);
    } else {
      plan.Failed(g);
    }
    ++out.already_present;
    ++out.progress.done;
  }
  return here;
}

// The GEMMs of no d_ff study in full, then the studies' adaptive plan round
// by round until it is decided or the run stops.
absl::StatusOr<store::JobState> RunAdaptive(const SweepSpec& spec, const std::vector<bool>& present,
                                            tuner::Backend& backend, ResultWriter& writer,
                                            store::Store& db, int64_t job_id,
                                            const SweepOptions& options, const Env& env,
                                            double start, SweepOutcome& out) {
  auto plan = tuner::AdaptivePlan::Make(spec.dff, backend.Gpu());
  if (!plan.ok()) return plan.status();
  std::vector<tuner::GemmShape> others;
  std::vector<bool> others_present;
  std::map<store::GemmKey, bool> stored;
  for (size_t i = 0; i < spec.gemms.size(); ++i) {
    if (plan->Plans(spec.gemms[i])) {
      stored[store::GemmKey::Of(spec.gemms[i])] = present[i];
    } else {
      others.push_back(spec.gemms[i]);
      others_present.push_back(present[i]);
    }
  }
  SweepProgress& p = out.progress;
  if (auto s = BeginPass(static_cast<int64_t>(others.size()), others_present, db, job_id, out);
      !s.ok()) {
    return s;
  }
  auto state =
      RunMissing(others, others_present, backend, writer, job_id, options, env, start, out);
  if (!state.ok() || *state != store::JobState::kDone) return state;
  const Seen seen = [&](const tuner::GemmShape& g,
                        const absl::StatusOr<tuner::GemmOutcome>& outcome) {
    const double t = outcome.ok() && outcome->measured ? FastestVerified(*outcome->measured) : 0;
    if (t > 0) {
      plan->Record(g, t);
    } else {
      plan->Failed(g);
    }
  };
  int rounds = 0;
  for (auto next = plan->Next(); !next.empty(); next = plan->Next()) {
    ++rounds;
    auto here = TakeStored(next, stored, *plan, backend, writer, db, out);
    if (!here.ok()) return here.status();
    p.total += static_cast<int64_t>(next.size());
    if (auto s = db.UpdateJob(job_id, store::JobState::kRunning, p.total, p.done, ""); !s.ok()) {
      return s;
    }
    if (options.on_stage) {
      options.on_stage(StrCat("plan adaptive: round ", rounds, ": ", next.size(), " GEMMs"));
    }
    state = RunMissing(next, *here, backend, writer, job_id, options, env, start, out, seen);
    if (!state.ok() || *state != store::JobState::kDone) return state;
  }
  const auto states = plan->States();
  for (size_t i = 0; i < states.size(); ++i) {
    out.plan_notes.push_back(DescribePlan(
        spec.dff[i], states[i], rounds, backend.Device().replay.empty() ? "measured" : "replayed"));
  }
  return store::JobState::kDone;
}

// A revalidation's way of running a GEMM: its stored top algorithms (of
// another software version on this GPU model) and the library's first
// choice, through the backend's Retimer; a GEMM nothing stored is searched
// in full.
RunOne Revalidating(tuner::Backend& backend, measure::Retimer& retimer, store::Store& db,
                    int64_t software_id, SweepOutcome::Revalidation& counts) {
  return [&backend, &retimer, &db, software_id,
          &counts](const tuner::GemmShape& g) -> absl::StatusOr<tuner::GemmOutcome> {
    auto stored = db.StoredTopAlgos(std::string(backend.Gpu().name), store::GemmKey::Of(g),
                                    backend.Mode(), software_id, kRevalidateAlgos);
    if (!stored.ok()) return stored.status();
    if (stored->empty()) {
      ++counts.searched;
      return backend.Run(g);
    }
    ++counts.retimed;
    return retimer.Retime(g, *stored);
  };
}

// The revalidation's report: this job against the newest run of each of the
// spec's GEMMs on this GPU model under any other software version (where the
// stored algorithms came from).
absl::Status CompareRevalidation(const SweepSpec& spec, const tuner::Backend& backend,
                                 store::Store& db, int64_t job_id, int64_t software_id,
                                 SweepOutcome::Revalidation& r) {
  answers::CompareQuery query;
  query.base = StrCat("gpu:", backend.Gpu().name, " under other software versions");
  query.now = StrCat("job:", job_id);
  query.mode = backend.Mode();
  auto studies = StudiesOf(spec);
  if (!studies.ok()) return studies.status();
  query.study_of = *std::move(studies);
  store::RunFilter base;
  base.gpu_model = std::string(backend.Gpu().name);
  base.except_software_id = software_id;
  base.mode = backend.Mode();
  store::RunFilter now = base;
  now.except_software_id.reset();
  now.job_id = job_id;
  auto report = answers::CompareFilters(db, base, now, query);
  if (absl::IsNotFound(report.status())) {
    r.lines.push_back("compare: no other software version stored these GEMMs on this GPU model");
    return absl::OkStatus();
  }
  if (!report.ok()) return report.status();
  r.lines.push_back(StrCat("compare new (job ", job_id,
                           ") against base (the newest run of each "
                           "GEMM on this GPU model under another software version; `crest "
                           "compare --base cublaslt:OLD --new job:",
                           job_id, "` lists every GEMM):"));
  for (std::string& line : answers::SummarizeComparison(*report, 10)) {
    r.lines.push_back(std::move(line));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPlan(const SweepSpec& spec, bool measures) {
  if (spec.revalidate && !measures) {
    return absl::InvalidArgumentError(
        "revalidate: re-times stored algorithms on a device; the model backend predicts and "
        "has none: give a measuring backend (cublaslt, replay)");
  }
  if (!spec.adaptive || measures) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "plan: \"adaptive\" times the candidates the model cannot rule out; the model backend "
      "predicts every one at once: give a measuring backend (cublaslt, replay) or plan full");
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepSpec& spec, tuner::Backend& backend,
                                      store::Store& db, const SweepOptions& options) {
  if (auto s = CheckPlan(spec, backend.Measures()); !s.ok()) return s;
  const Env& env = options.env != nullptr ? *options.env : DefaultEnv();
  const double start = env.MonotonicSeconds();
  ResultWriter writer(backend, db);
  if (auto s = writer.Prepare(); !s.ok()) return s;

  SweepOutcome out;
  auto job = FindOrCreateJob(spec, backend, writer.Target(), db, options, &out.resumed);
  if (!job.ok()) return job.status();
  const int64_t job_id = job->id;

  auto present = PresentGemms(spec.gemms, writer, options.force);
  if (!present.ok()) return present.status();
  std::vector<tuner::GemmShape> to_run;
  for (size_t i = 0; i < spec.gemms.size(); ++i) {
    if (!(*present)[i]) to_run.push_back(spec.gemms[i]);
  }
  if (auto s = backend.Reserve(to_run); !s.ok()) return s;
  SweepProgress& p = out.progress;
  absl::StatusOr<store::JobState> final_state;
  if (spec.adaptive) {
    final_state =
        RunAdaptive(spec, *present, backend, writer, db, job_id, options, env, start, out);
  } else if (auto s = BeginPass(static_cast<int64_t>(spec.gemms.size()), *present, db, job_id, out);
             !s.ok()) {
    return s;
  } else {
    RunOne run_one;
    if (spec.revalidate) {
      auto* retimer = dynamic_cast<measure::Retimer*>(&backend);
      if (retimer == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("revalidate: the ", backend.Name(), " backend cannot time given algorithms"));
      }
      out.revalidation.emplace();
      run_one = Revalidating(backend, *retimer, db, writer.software_id(), *out.revalidation);
    }
    final_state = RunMissing(spec.gemms, *present, backend, writer, job_id, options, env, start,
                             out, {}, run_one);
  }
  if (!final_state.ok()) return final_state.status();
  const int64_t planned = p.total;
  p.elapsed_s = env.MonotonicSeconds() - start;
  std::string error;
  if (*final_state == store::JobState::kDone && p.failed > 0) {
    *final_state = store::JobState::kFailed;
    error = StrCat(p.failed, " of ", planned, " GEMMs failed; first: ", out.first_error);
  }
  if (!out.stopped_because.empty()) {
    error = StrCat(out.stopped_because, " after ", p.done, " of ", planned,
                   " GEMMs; their results are kept, and running the job again runs the rest");
  }
  if (auto s = db.UpdateJob(job_id, *final_state, planned, p.done, error); !s.ok()) return s;
  if (out.revalidation && *final_state == store::JobState::kDone) {
    out.revalidation->lines.insert(
        out.revalidation->lines.begin(),
        StrCat("revalidate: re-timed ", out.revalidation->retimed, " GEMMs with up to ",
               kRevalidateAlgos,
               " of their fastest stored algorithms and the library's first "
               "choice; ",
               out.revalidation->searched,
               " searched in full (no other software version had "
               "stored them); ",
               out.already_present, " already measured under this version"));
    if (auto s =
            CompareRevalidation(spec, backend, db, job_id, writer.software_id(), *out.revalidation);
        !s.ok()) {
      return s;
    }
  }
  if (*final_state == store::JobState::kDone) {
    internal::RaceContext context{writer.device_id(), writer.software_id(),
                                  [&options] { return Stopped(options); }, options.on_stage};
    auto races = internal::RaceStudies(spec, backend, db, context);
    if (!races.ok()) return races.status();
    out.races = *std::move(races);  // outside the pass's accounting (elapsed_s)
  }
  auto final_job = db.GetJob(job_id);
  if (!final_job.ok()) return final_job.status();
  out.job = *final_job;
  return out;
}

}  // namespace crest::sweep
