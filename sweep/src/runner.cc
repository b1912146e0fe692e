#include "crest/sweep/runner.h"

#include <algorithm>
#include <chrono>

#include "crest/common/str_cat.h"

namespace crest::sweep {
namespace {

// What the store needs to know about one backend's results.
class ResultWriter {
 public:
  ResultWriter(Backend& backend, store::Store& db) : backend_(backend), db_(db) {}

  absl::Status Prepare() {
    if (!backend_.Measures()) return absl::OkStatus();
    DeviceInfo device = backend_.Device();
    device.gpu_model = std::string(backend_.Gpu().name);
    auto ids = db_.RegisterDevice(device, backend_.Software());
    if (!ids.ok()) return ids.status();
    device_id_ = ids->first;
    software_id_ = ids->second;
    sm_count_ = device.sm_count > 0 ? device.sm_count : backend_.Gpu().sm_count;
    return absl::OkStatus();
  }

  std::string Target() const {
    return backend_.Measures() ? backend_.Device().uuid : std::string(backend_.Gpu().name);
  }

  absl::StatusOr<bool> Has(const GemmShape& g) {
    const auto key = store::GemmKey::Of(g);
    if (backend_.Measures()) return db_.HasMeasurement(device_id_, software_id_, key, backend_.Mode());
    return db_.HasPrediction(std::string(backend_.Gpu().name),
                             ModelVersionFor(backend_.Gpu(), g.dtype), key);
  }

  absl::Status Write(int64_t job_id, const GemmShape& g, const GemmOutcome& outcome) {
    if (outcome.measured) {
      return db_.InsertMeasurement(job_id, device_id_, software_id_,
                                   std::string(backend_.Gpu().name), sm_count_, *outcome.measured);
    }
    if (outcome.predicted) {
      return db_.InsertPrediction(job_id, std::string(backend_.Gpu().name), g, *outcome.predicted);
    }
    return absl::InternalError(StrCat("backend ", backend_.Name(), " returned no result"));
  }

 private:
  Backend& backend_;
  store::Store& db_;
  int64_t device_id_ = 0;
  int64_t software_id_ = 0;
  int sm_count_ = 0;
};

}  // namespace

double SweepProgress::GemmsPerMinute() const {
  return elapsed_s > 0 ? 60.0 * static_cast<double>(new_results + failed) / elapsed_s : 0;
}

double SweepProgress::GpuBusyFraction() const {
  return elapsed_s > 0 ? kernel_s / elapsed_s : 0;
}

double SweepProgress::HostOverheadPerGemmS() const {
  const int64_t run = new_results + failed;
  return run > 0 ? std::max(0.0, elapsed_s - kernel_s) / static_cast<double>(run) : 0;
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepSpec& spec, Backend& backend, store::Store& db,
                                      const SweepOptions& options) {
  const Env& env = options.env != nullptr ? *options.env : DefaultEnv();
  const auto now_s = [&env] { return env.MonotonicSeconds(); };
  const double start = now_s();
  ResultWriter writer(backend, db);
  if (auto s = writer.Prepare(); !s.ok()) return s;

  SweepOutcome out;
  const auto total = static_cast<int64_t>(spec.gemms.size());
  auto job = options.job_id
                 ? db.GetJob(*options.job_id)
                 : db.FindJob(spec.canonical_json, std::string(backend.Name()), writer.Target());
  if (options.job_id && job.ok() && job->spec != spec.canonical_json) {
    return absl::InvalidArgumentError(
        StrCat("job ", *options.job_id, " holds a different spec than the one given"));
  }
  if (options.job_id) {
    if (!job.ok()) return job.status();
    if (job->state == store::JobState::kDone || job->state == store::JobState::kCancelled) {
      return absl::FailedPreconditionError(
          StrCat("job ", job->id, " is already ", store::JobStateName(job->state)));
    }
    out.resumed = job->state != store::JobState::kQueued || job->done > 0;
  } else if (job.ok() && job->state != store::JobState::kDone &&
             job->state != store::JobState::kCancelled) {
    out.resumed = true;
  } else if (job.ok() || absl::IsNotFound(job.status())) {
    store::JobRecord fresh;
    fresh.spec = spec.canonical_json;
    fresh.backend = std::string(backend.Name());
    fresh.target = writer.Target();
    fresh.state = store::JobState::kQueued;
    fresh.total = total;
    fresh.priority = options.priority;
    job = db.CreateJob(fresh);
    if (!job.ok()) return job.status();
  } else {
    return job.status();
  }
  const int64_t job_id = job->id;

  // Which GEMMs the store already holds: they count as done.
  std::vector<bool> present(spec.gemms.size(), false);
  if (!options.force) {
    for (size_t i = 0; i < spec.gemms.size(); ++i) {
      auto has = writer.Has(spec.gemms[i]);
      if (!has.ok()) return has.status();
      present[i] = *has;
      out.already_present += *has ? 1 : 0;
    }
  }
  std::vector<GemmShape> to_run;
  for (size_t i = 0; i < spec.gemms.size(); ++i) {
    if (!present[i]) to_run.push_back(spec.gemms[i]);
  }
  if (auto s = backend.Reserve(to_run); !s.ok()) return s;
  SweepProgress& p = out.progress;
  p.total = total;
  p.done = out.already_present;
  if (auto s = db.UpdateJob(job_id, store::JobState::kRunning, total, p.done, ""); !s.ok()) {
    return s;
  }

  store::JobState final_state = store::JobState::kDone;
  for (size_t i = 0; i < spec.gemms.size(); ++i) {
    if (present[i]) continue;
    if (options.cancel != nullptr && options.cancel->load()) {
      final_state = store::JobState::kCancelled;
      break;
    }
    if (options.interrupt != nullptr && options.interrupt->load()) {
      final_state = store::JobState::kQueued;
      out.interrupted = true;
      break;
    }
    const double before = now_s();
    auto outcome = backend.Run(spec.gemms[i]);
    p.busy_s += now_s() - before;
    if (!outcome.ok()) {
      ++p.failed;
      if (out.first_error.empty()) {
        out.first_error =
            StrCat(spec.gemms[i].name, " (m=", spec.gemms[i].m, " n=", spec.gemms[i].n,
                   " k=", spec.gemms[i].k, "): ", outcome.status().message());
      }
    } else {
      if (outcome->measured) p.kernel_s += outcome->measured->kernel_seconds;
      if (auto s = writer.Write(job_id, spec.gemms[i], *outcome); !s.ok()) return s;
      if (options.on_result) options.on_result(spec.gemms[i], *outcome);
      ++p.new_results;
      ++p.done;
    }
    p.elapsed_s = now_s() - start;
    if (options.on_progress) options.on_progress(p);
  }
  p.elapsed_s = now_s() - start;
  std::string error;
  if (final_state == store::JobState::kDone && p.failed > 0) {
    final_state = store::JobState::kFailed;
    error = StrCat(p.failed, " of ", total, " GEMMs failed; first: ", out.first_error);
  }
  if (auto s = db.UpdateJob(job_id, final_state, total, p.done, error); !s.ok()) return s;
  auto final_job = db.GetJob(job_id);
  if (!final_job.ok()) return final_job.status();
  out.job = *final_job;
  return out;
}

}  // namespace crest::sweep
