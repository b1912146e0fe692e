// `crest jobs submit|list|show|watch|cancel`: the job queue of a crestd
// (--server is required).
#include <chrono>
#include <ctime>
#include <memory>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/store/records.h"
#include "crest/wire/values.h"
#include "dff_flags.h"
#include "job_reports.h"
#include "measure_flags.h"
#include "outputs.h"
#include "printer.h"
#include "remote.h"
#include "remote_jobs.h"
#include "sweep_input.h"

namespace crest::cli {
namespace {

struct JobsFlags {
  std::string spec_file;
  DffFlags window;
  std::string backend;
  int priority = 0;
  bool force = false;
  bool wait = false;
  std::string state;
  int limit = 20;
  int64_t before = 0;
  int64_t id = 0;
  MeasureFlags measure;
};

absl::StatusOr<DaemonChannel> Connect() {
  if (Remote().server.empty()) {
    return absl::InvalidArgumentError(
        "server: `crest jobs` talks to a crestd; give --server HOST:PORT (or set CREST_SERVER)");
  }
  return DaemonChannel::Open(Remote());
}

absl::Status Watch(DaemonChannel& c, int64_t id, Io& io) {
  v1::WatchJobRequest request;
  request.set_id(id);
  auto followed = FollowJob(
      c, [&](grpc::ClientContext* context) { return c.stub().WatchJob(context, request); }, io.err,
      StrCat("job ", id));
  if (!followed.ok()) return followed.status();
  if (followed->interrupted) {
    return absl::CancelledError(
        StrCat("stopped watching; job ", id, " goes on (crest jobs cancel ", id, " stops it)"));
  }
  PrintJobEnd(followed->last, Remote().server, /*sweep_command=*/false, io);
  return JobStatus(followed->last.job());
}

absl::Status Submit(const JobsFlags& f, Io& io) {
  auto text = SweepSpecText(f.spec_file, f.window, MeasureOverrides(f.measure));
  if (!text.ok()) return text.status();
  auto c = Connect();
  if (!c.ok()) return c.status();
  v1::SubmitJobRequest request;
  request.mutable_spec()->set_json(*text);
  request.set_backend(f.backend);
  request.set_priority(f.priority);
  request.set_force(f.force);
  v1::SubmitJobResponse response;
  if (auto s = CallUnary(*c, &v1::Crest::Stub::SubmitJob, request, &response); !s.ok()) return s;
  if (!f.wait) {
    PrinterFor(io)->Print(JobReport{response.job(), false, ""});
    return absl::OkStatus();
  }
  io.err << JobLine(response.job()) << '\n';
  return Watch(*c, response.job().id(), io);
}

absl::Status List(const JobsFlags& f, Io& io) {
  auto c = Connect();
  if (!c.ok()) return c.status();
  v1::ListJobsRequest request;
  if (!f.state.empty()) {
    auto state = store::ParseJobState(f.state);
    if (!state) {
      return absl::InvalidArgumentError(
          StrCat("state: '", f.state, "' is not queued, running, done, failed or cancelled"));
    }
    request.set_state(wire::ProtoJobState(*state));
  }
  request.set_limit(f.limit);
  request.set_before_id(f.before);
  v1::ListJobsResponse response;
  if (auto s = CallUnary(*c, &v1::Crest::Stub::ListJobs, request, &response); !s.ok()) return s;
  PrinterFor(io)->Print(
      JobListReport{{response.jobs().begin(), response.jobs().end()}, response.next_before_id()});
  return absl::OkStatus();
}

// A job id the node has no job for is nothing known (exit 1, as docs/cli.md's
// exit codes say), not bad input: the id was well formed.
absl::Status NothingKnown(absl::Status s) {
  return absl::IsNotFound(s) ? absl::FailedPreconditionError(s.message()) : s;
}

absl::Status Show(const JobsFlags& f, Io& io) {
  auto c = Connect();
  if (!c.ok()) return c.status();
  v1::GetJobRequest request;
  request.set_id(f.id);
  v1::Job job;
  if (auto s = CallUnary(*c, &v1::Crest::Stub::GetJob, request, &job); !s.ok()) {
    return NothingKnown(s);
  }
  PrinterFor(io)->Print(JobReport{job, true, ""});
  return absl::OkStatus();
}

absl::Status Cancel(const JobsFlags& f, Io& io) {
  auto c = Connect();
  if (!c.ok()) return c.status();
  v1::CancelJobRequest request;
  request.set_id(f.id);
  v1::Job job;
  if (auto s = CallUnary(*c, &v1::Crest::Stub::CancelJob, request, &job); !s.ok()) {
    return NothingKnown(s);
  }
  PrinterFor(io)->Print(JobReport{
      job, false, job.state() == v1::JOB_STATE_RUNNING ? "(stops before its next GEMM)" : ""});
  return absl::OkStatus();
}

}  // namespace

Command RegisterJobs(CLI::App& root) {
  auto f = std::make_shared<JobsFlags>();
  Command cmd;
  cmd.app = AddCommand(root, "jobs",
                       "The job queue of a crestd (--server): submit, list, show, watch, cancel");
  RequireCommand(*cmd.app);
  CLI::App* submit =
      AddCommand(*cmd.app, "submit",
                 "Queue a sweep (d_ff flags or --spec FILE); an identical queued or running "
                 "sweep is returned instead of a second job");
  AddOption(*submit, "--spec", f->spec_file, "JSON sweep spec (docs/sweep-spec.md)");
  AddDffFlags(*submit, f->window, /*required=*/false);
  AddOption(*submit, "--backend", f->backend,
            "model or cublaslt; default: cublaslt where the node has a device");
  AddOption(*submit, "--priority", f->priority,
            "larger runs first; nightly batches 0, interactive sweeps 100")
      .ShowDefault();
  AddFlag(*submit, "--force", f->force, "redo GEMMs the database already holds");
  AddFlag(*submit, "--wait", f->wait, "follow the job to its end, like `jobs watch`");
  AddMeasureFlags(*submit, f->measure, /*with_device=*/false);
  CLI::App* list = AddCommand(*cmd.app, "list", "List jobs, newest first");
  AddOption(*list, "--state", f->state, "queued, running, done, failed or cancelled");
  AddOption(*list, "--limit", f->limit, "rows at most").ShowDefault();
  AddOption(*list, "--before", f->before,
            "only jobs with a smaller id: the next page, as the last page's end says");
  CLI::App* show = AddCommand(*cmd.app, "show", "One job, whole");
  AddOption(*show, "id", f->id, "job id").Required();
  CLI::App* watch = AddCommand(
      *cmd.app, "watch", "Follow a job with a progress bar until it ends; exit 0 when it is done");
  AddOption(*watch, "id", f->id, "job id").Required();
  CLI::App* cancel = AddCommand(
      *cmd.app, "cancel", "Cancel a job: a queued one at once, a running one before its next GEMM");
  AddOption(*cancel, "id", f->id, "job id").Required();
  cmd.run = [=](Io& io) -> absl::Status {
    if (Parsed(*submit)) return Submit(*f, io);
    if (Parsed(*list)) return List(*f, io);
    if (Parsed(*show)) return Show(*f, io);
    if (Parsed(*cancel)) return Cancel(*f, io);
    if (Parsed(*watch)) {
      auto c = Connect();
      if (!c.ok()) return c.status();
      return NothingKnown(Watch(*c, f->id, io));
    }
    return absl::InvalidArgumentError("jobs: give submit, list, show, watch or cancel");
  };
  return cmd;
}

}  // namespace crest::cli
