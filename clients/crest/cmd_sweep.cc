// `crest sweep`: run a sweep spec through a backend into a database.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "build_info.h"
#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/sweep/backend_factory.h"
#include "crest/sweep/runner.h"
#include "dff_flags.h"
#include "interrupt.h"
#include "json_views.h"
#include "measure_flags.h"
#include "progress.h"
#include "remote.h"
#include "remote_jobs.h"
#include "sweep_input.h"
#include "table.h"

namespace crest::cli {
namespace {

struct SweepFlags {
  std::string db;
  std::string spec_file;
  std::string backend;  // empty: model locally, the daemon's default remotely
  DffFlags window;
  bool force = false;
  int priority = 0;
  MeasureFlags measure;
};

// `crest sweep --server`: the daemon runs it as an interactive job.
absl::Status RunRemoteSweep(const SweepFlags& f, const std::string& spec_text, Io& io) {
  if (!f.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
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
  if (io.json) {
    io.out << Document(JobEventJson(last)) << '\n';
  } else {
    io.out << JobLine(last.job()) << " on crestd at " << Remote().server << "\n  "
           << last.new_results()
           << (last.job().backend() == "model" ? " new predictions (model, not measured), "
                                               : " new measurements, ")
           << last.failed() << " failed, " << Fixed(last.elapsed_s(), 2) << " s\n";
    if (last.kernel_s() > 0) {
      io.out << "  " << Accounting(last.gemms_per_minute(), last.gpu_busy_fraction(),
                                   last.host_overhead_per_gemm_s())
             << "\n";
    }
  }
  return JobStatus(last.job());
}

void PrintOutcome(const sweep::SweepOutcome& o, const sweep::SweepSpec& spec,
                  const std::string& db, std::string_view backend, bool measures, Io& io) {
  const double rate = o.progress.elapsed_s > 0
                          ? static_cast<double>(o.progress.new_results) / o.progress.elapsed_s
                          : 0;
  const char* kind = measures ? "measurements" : "predictions";
  if (io.json) {
    io.out << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                             {"db", db},
                             {"backend", backend},
                             {"job", JobJson(o.job)},
                             {"resumed", o.resumed},
                             {"new_results", o.progress.new_results},
                             {"already_present", o.already_present},
                             {"failed", o.progress.failed},
                             {"elapsed_s", o.progress.elapsed_s},
                             {"gemms_per_s", rate},
                             {"kernel_s", o.progress.kernel_s},
                             {"gemms_per_minute", o.progress.GemmsPerMinute()},
                             {"gpu_busy_fraction", o.progress.GpuBusyFraction()},
                             {"host_overhead_per_gemm_s", o.progress.HostOverheadPerGemmS()},
                             {"measure", measures ? sweep::MeasureJson(spec.measure)
                                                  : nlohmann::json(nullptr)},
                             {"notes", spec.notes}}
                  .dump(2)
           << '\n';
  } else {
    io.out << "job " << o.job.id << (o.resumed ? " (resumed)" : "") << ": "
           << store::JobStateName(o.job.state) << ", " << o.job.done << "/" << o.job.total
           << " GEMMs in " << db << "\n  " << o.progress.new_results << " new " << kind << ", "
           << o.already_present << " already in the database, " << o.progress.failed
           << " failed\n  " << Fixed(o.progress.elapsed_s, 2) << " s, " << Fixed(rate, 0)
           << " GEMMs/s\n";
    if (measures && o.progress.elapsed_s > 0) {
      io.out << "  measured " << CacheModeName(spec.measure.mode.cache) << " L2, "
             << ClockPolicyName(spec.measure.mode.clocks) << " clocks; "
             << Accounting(o.progress.GemmsPerMinute(), o.progress.GpuBusyFraction(),
                           o.progress.HostOverheadPerGemmS())
             << "\n";
    }
    if (!o.job.error.empty()) io.out << "  error: " << o.job.error << '\n';
  }
}

absl::Status RunSweepCommand(const SweepFlags& f, Io& io) {
  auto text = SweepSpecText(f.spec_file, f.window, MeasureOverrides(f.measure));
  if (!text.ok()) return text.status();
  const std::string& spec_text = *text;
  if (!Remote().server.empty()) return RunRemoteSweep(f, spec_text, io);
  if (f.db.empty()) return absl::InvalidArgumentError("db: give --db FILE (or --server HOST:PORT)");
  auto spec = sweep::ParseSweepSpec(spec_text);
  if (!spec.ok()) return spec.status();
  if (!f.window.gpu.empty() && !spec->gpu.empty() && f.window.gpu != spec->gpu) {
    return absl::InvalidArgumentError(
        StrCat("gpu: --gpu ", f.window.gpu, " differs from the spec's \"gpu\": ", spec->gpu));
  }
  // The backend comes first: without a device nothing, the database
  // included, is touched.
  auto backend = sweep::MakeBackend({f.backend.empty() ? "model" : f.backend,
                                       f.window.gpu.empty() ? spec->gpu : f.window.gpu,
                                       f.measure.device, spec->measure});
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
  run.on_progress = [&](const sweep::SweepProgress& p) {
    progress.Update(p.done, p.total, p.elapsed_s,
                    measures ? Accounting(p.GemmsPerMinute(), p.GpuBusyFraction(),
                                          p.HostOverheadPerGemmS())
                             : "");
  };
  absl::StatusOr<sweep::SweepOutcome> outcome;
  {
    InterruptScope interrupt;
    run.cancel = &interrupt.flag();
    outcome = sweep::RunSweep(*spec, **backend, **db, run);
  }
  progress.Finish();
  if (!outcome.ok()) return outcome.status();

  const auto& o = *outcome;
  PrintOutcome(o, *spec, f.db, (*backend)->Name(), measures, io);
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
  cmd.app = root.add_subcommand(
      "sweep",
      "Run a sweep (d_ff flags or --spec FILE) through a backend into a database, or on a crestd "
      "(--server) with a progress bar; re-running resumes an interrupted sweep");
  CLI::App& app = *cmd.app;
  app.add_option("--db", flags->db, "database file (created if missing); or --server");
  app.add_option("--spec", flags->spec_file, "JSON sweep spec (docs/sweep-spec.md)");
  app.add_option("--backend", flags->backend,
                 "model (predict) or cublaslt (measure); default: model locally, the daemon's "
                 "choice with --server (cublaslt where it has a device)");
  AddDffFlags(app, flags->window, /*required=*/false);
  app.add_flag("--force", flags->force, "redo GEMMs the database already holds");
  app.add_option("--priority", flags->priority, "priority recorded on a new job")
      ->capture_default_str();
  AddMeasureFlags(app, flags->measure, /*with_device=*/true);
  cmd.run = [flags](Io& io) { return RunSweepCommand(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
