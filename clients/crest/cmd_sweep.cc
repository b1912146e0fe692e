// `crest sweep`: run a sweep spec through a backend into a database.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "build_info.h"
#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/store/store.h"
#include "crest/sweep/backend_factory.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/sweep_report.h"
#include "dff_flags.h"
#include "interrupt.h"
#include "job_reports.h"
#include "measure_flags.h"
#include "outputs.h"
#include "printer.h"
#include "progress.h"
#include "remote.h"
#include "remote_jobs.h"
#include "sweep_input.h"

namespace crest::cli {
namespace {

struct SweepFlags {
  std::string db;
  std::string spec_file;
  std::string shard;
  std::string plan;
  bool revalidate = false;
  std::string backend;  // empty: model locally, the daemon's default remotely
  DffFlags window;
  bool force = false;
  int priority = 0;
  MeasureFlags measure;
  sweep::ReplayChoice replay;
};

// `crest sweep --server`: the daemon runs it as an interactive job.
absl::Status RunRemoteSweep(const SweepFlags& f, const std::string& spec_text,
                            const char* replay_flag, Io& io) {
  if (!f.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
  if (f.backend == "replay" || replay_flag != nullptr) {
    return absl::InvalidArgumentError(
        "backend: the replay backend runs locally (--db FILE), not on a crestd: a node's "
        "database holds its GPU's measurements");
  }
  auto connection = DaemonChannel::Open(Remote());
  if (!connection.ok()) return connection.status();
  v1::SweepRequest request;
  request.mutable_spec()->set_json(spec_text);
  request.set_backend(f.backend);
  request.set_force(f.force);
  auto followed = FollowJob(
      *connection,
      [&](grpc::ClientContext* context) { return connection->stub().Sweep(context, request); },
      io.err, "sweep");
  if (!followed.ok()) return followed.status();
  const v1::JobEvent& last = followed->last;
  if (followed->interrupted) {
    return absl::CancelledError(
        StrCat("interrupted; crestd at ", Remote().server, " cancels job ", last.job().id(),
               " (results so far are kept); run the same command again to resume"));
  }
  PrintJobEnd(last, Remote().server, /*sweep_command=*/true, io);
  return JobStatus(last.job());
}

// The first --replay* flag given, or nullptr.
const char* ReplayFlagGiven(const CLI::App& app) {
  for (const char* flag :
       {"--replay", "--replay-noise", "--replay-seed", "--replay-trace", "--replay-cublaslt"}) {
    if (Count(app, flag) > 0) return flag;
  }
  return nullptr;
}

absl::Status RunSweepCommand(const SweepFlags& f, const CLI::App& app, Io& io) {
  const char* replay_flag = ReplayFlagGiven(app);
  auto text = SweepSpecText(f.spec_file, f.window, MeasureOverrides(f.measure), f.shard, f.plan,
                            f.revalidate);
  if (!text.ok()) return text.status();
  const std::string& spec_text = *text;
  if (!Remote().server.empty()) return RunRemoteSweep(f, spec_text, replay_flag, io);
  if (f.db.empty()) return absl::InvalidArgumentError("db: give --db FILE (or --server HOST:PORT)");
  auto spec = sweep::ParseSweepSpec(spec_text);
  if (!spec.ok()) return spec.status();
  if (!f.window.gpu.empty() && !spec->gpu.empty() && f.window.gpu != spec->gpu) {
    return absl::InvalidArgumentError(
        StrCat("gpu: --gpu ", f.window.gpu, " differs from the spec's \"gpu\": ", spec->gpu));
  }
  // The backend comes first: without a device nothing, the database
  // included, is touched.
  const std::string backend_name = f.backend.empty() ? "model" : f.backend;
  if (backend_name != "replay" && replay_flag != nullptr) {
    return absl::InvalidArgumentError(StrCat("replay: ", replay_flag, " is for --backend replay"));
  }
  auto backend = sweep::MakeBackend({backend_name, f.window.gpu.empty() ? spec->gpu : f.window.gpu,
                                     f.measure.device, spec->measure, f.replay});
  if (!backend.ok()) return backend.status();
  store::StoreOptions options;
  auto db = store::Store::Open(f.db, options);
  if (!db.ok()) return db.status();

  for (const auto& note : spec->notes) io.err << "note: " << note << '\n';
  ProgressReporter progress(io.err, isatty(STDERR_FILENO) != 0, "sweep");
  sweep::SweepOptions run;
  run.force = f.force;
  run.priority = f.priority;
  const bool measures = (*backend)->Measures();
  const bool on_a_gpu = measures && (*backend)->Device().replay.empty();
  run.on_progress = [&](const sweep::SweepProgress& p) {
    progress.Update(
        p.done, p.total, p.elapsed_s,
        on_a_gpu ? Accounting(p.GemmsPerMinute(), p.GpuBusyFraction(), p.HostOverheadPerGemmS())
                 : "");
  };
  run.on_stage = [&](std::string_view line) { progress.Note(std::string(line)); };
  absl::StatusOr<sweep::SweepOutcome> outcome;
  {
    InterruptScope interrupt;
    run.cancel = &interrupt.flag();
    outcome = sweep::RunSweep(*spec, **backend, **db, run);
  }
  progress.Finish();
  if (!outcome.ok()) return outcome.status();

  const auto& o = *outcome;
  SweepReport report{sweep::ReportOf(o, *spec, **backend), f.db, ""};
  PrinterFor(io)->Print(report);
  if (o.job.state == store::JobState::kCancelled) {
    return absl::CancelledError("interrupted; run the same command again to resume");
  }
  if (o.job.state == store::JobState::kFailed) return absl::AbortedError(o.job.error);
  return absl::OkStatus();
}

}  // namespace

Command RegisterSweep(CLI::App& root) {
  auto flags = std::make_shared<SweepFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "sweep",
      "Run a sweep (d_ff flags or --spec FILE) through a backend into a database, or on a crestd "
      "(--server) with a progress bar; re-running resumes an interrupted sweep");
  CLI::App& app = *cmd.app;
  AddOption(app, "--db", flags->db, "database file (created if missing); or --server");
  AddOption(app, "--spec", flags->spec_file, "JSON sweep spec (docs/sweep-spec.md)");
  AddOption(app, "--backend", flags->backend,
            "model (predict), cublaslt (measure) or replay (time a recorded table on a "
            "simulated GPU through the measuring pipeline; rows labelled replayed); "
            "default: model locally, the daemon's choice with --server (cublaslt where it "
            "has a device)");
  AddOption(app, "--replay", flags->replay.file,
            "replay: the recorded table, a CSV as `crest db import` reads it "
            "(name,batch,m,n,k,dtype,layout,median_us,...); --gpu names its GPU when it "
            "has no device column");
  AddOption(app, "--replay-noise", flags->replay.noise,
            "replay: each launch's relative standard deviation, 0 to 0.5")
      .ShowDefault();
  AddOption(app, "--replay-seed", flags->replay.seed, "replay: the noise's seed").ShowDefault();
  AddOption(app, "--replay-cublaslt", flags->replay.cublaslt,
            "replay: the cuBLASLt version the table stands for (a table recorded before "
            "and after an upgrade, to rehearse --revalidate); 0 none")
      .ShowDefault();
  AddOption(app, "--replay-trace", flags->replay.trace,
            "replay: an nvidia-smi clock trace (timestamp, clocks.sm, power.draw, "
            "temperature.gpu, clocks_throttle_reasons.active) whose drift the simulated GPU "
            "follows: boost at first, the power-capped clock under load; default none "
            "(steady)");
  AddDffFlags(app, flags->window, /*required=*/false);
  AddFlag(app, "--force", flags->force, "redo GEMMs the database already holds");
  AddOption(app, "--shard", flags->shard,
            "TASK/TASKS: sweep only this task's share of the plan (its GEMMs TASK, "
            "TASK+TASKS, ...): the tasks of an array together sweep every GEMM once");
  AddFlag(app, "--revalidate", flags->revalidate,
          "after a library upgrade: re-time each GEMM the database holds under another "
          "software version with its stored top algorithms and cuBLASLt's first choice "
          "instead of a full search, then compare old with new (measuring backends; "
          "docs/sweep-spec.md)");
  AddOption(app, "--plan", flags->plan,
            "full (every GEMM; default) or adaptive: time each d_ff study's baseline and "
            "the candidates the model cannot rule out, bounding the rest by what was "
            "measured, until none could beat the measured leader (measuring backends; "
            "docs/sweep-spec.md)");
  AddOption(app, "--priority", flags->priority, "priority recorded on a new job").ShowDefault();
  AddMeasureFlags(app, flags->measure, /*with_device=*/true);
  cmd.run = [flags, &app](Io& io) { return RunSweepCommand(*flags, app, io); };
  return cmd;
}

}  // namespace crest::cli
