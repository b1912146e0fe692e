// `crest compare`: two selections of runs set side by side, GEMM by GEMM,
// from a database or a crestd (answers/compare.h).
#include <memory>

#include "cli.h"
#include "compare_reports.h"
#include "crest/answers/compare.h"
#include "crest/answers/fleet_health.h"
#include "crest/common/env.h"
#include "crest/common/str_cat.h"
#include "crest/store/store.h"
#include "crest/sweep/spec.h"
#include "crest/sweep/spec_studies.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/wire/convert.h"
#include "dim_list.h"
#include "gemm_flags.h"
#include "printer.h"
#include "read_only_db.h"
#include "remote.h"
#include "run_cli.h"

namespace crest::cli {
namespace {

struct CompareFlags {
  std::string db;
  std::string base;
  std::string now;
  std::string threshold = "3%";
  ModeFlags mode;
  std::string algo = "best";
  std::string spec;
  bool fail_on_regression = false;
  bool fleet = false;
  std::string gpu;
};

absl::StatusOr<answers::CompareReport> CompareRemote(const answers::CompareQuery& query,
                                                     const std::string& spec_text,
                                                     int64_t* left_out) {
  auto channel = DaemonChannel::Open(Remote());
  if (!channel.ok()) return channel.status();
  v1::CompareRequest request;
  request.set_base_selector(query.base);
  request.set_new_selector(query.now);
  request.set_threshold(query.threshold);
  wire::Fill(query.mode, request.mutable_mode());
  request.set_algo(std::string(tuner::AlgoChoiceName(query.algo)));
  request.set_spec_json(spec_text);
  v1::CompareResponse response;
  if (auto s = CallUnary(*channel, &v1::Crest::Stub::Compare, request, &response); !s.ok()) {
    return s;
  }
  return wire::CompareReportOf(response, query, left_out);
}

// Every device of a catalogue against its fleet (answers/fleet_health.h).
absl::Status RunFleet(const CompareFlags& f, double threshold, tuner::AlgoChoice algo, Io& io) {
  if (!Remote().server.empty() || f.db.empty()) {
    return absl::InvalidArgumentError(
        "db: --fleet reads a database (--db FILE, e.g. a catalogue crest fleet pull filled); a "
        "crestd exports the same figures as crest_fleet_* metrics");
  }
  if (!f.base.empty() || !f.now.empty() || !f.spec.empty()) {
    return absl::InvalidArgumentError(
        "fleet: --fleet sets every device against its fleet; --base, --new and --spec do not "
        "apply");
  }
  answers::FleetQuery query;
  query.threshold = threshold;
  query.mode = ToMode(f.mode);
  query.algo = algo;
  if (!f.gpu.empty()) {
    auto gpu = tuner::FindGpu(f.gpu);
    if (!gpu.ok()) return gpu.status();  // "gpu: unknown GPU …", naming the known ones
    query.gpu_model = std::string((*gpu)->name);
  }
  auto db = OpenExisting(f.db);
  if (!db.ok()) return db.status();
  auto health = answers::CheckFleet(**db, query);
  if (!health.ok()) return health.status();
  FleetHealthResult result{*std::move(health), f.db};
  PrinterFor(io)->Print(result);
  if (f.fail_on_regression && answers::SlowerDevices(result.health) > 0) {
    io.exit_code = kExitRegression;
  }
  return absl::OkStatus();
}

absl::Status RunCompare(const CompareFlags& f, Io& io) {
  auto threshold = ParseFraction("threshold", f.threshold);
  if (!threshold.ok()) return threshold.status();
  const auto algo = tuner::ParseAlgoChoice(f.algo);
  if (!algo)
    return absl::InvalidArgumentError(StrCat("algo: '", f.algo, "' is not best or default"));
  if (f.fleet) return RunFleet(f, *threshold, *algo, io);
  if (!f.gpu.empty()) {
    return absl::InvalidArgumentError("gpu: --gpu goes with --fleet; select runs with gpu:MODEL");
  }
  if (f.base.empty() || f.now.empty()) {
    return absl::InvalidArgumentError("base: give --base and --new (or --fleet)");
  }
  const bool remote = !Remote().server.empty();
  if (remote == !f.db.empty()) {
    return absl::InvalidArgumentError("db: give --db FILE or --server HOST:PORT (one of them)");
  }
  answers::CompareQuery query;
  query.base = f.base;
  query.now = f.now;
  query.threshold = *threshold;
  query.mode = ToMode(f.mode);
  query.algo = *algo;
  std::string spec_text;
  if (!f.spec.empty()) {
    auto text = ReadFileToString(f.spec);
    if (!text.ok()) return absl::NotFoundError(StrCat("spec: ", text.status().message()));
    spec_text = *std::move(text);
  }
  // Selectors are checked here too, so a typo is bad input before any call.
  for (const auto& [text, flag] : {std::pair(&f.base, "--base"), std::pair(&f.now, "--new")}) {
    if (auto s = answers::ParseRunSelector(*text, flag); !s.ok()) return s.status();
  }
  CompareResult result;
  absl::StatusOr<answers::CompareReport> report;
  if (remote) {
    result.origin = StrCat("crestd at ", Remote().server);
    report = CompareRemote(query, spec_text, &result.left_out);
  } else {
    // The spec's studies are expanded where the comparison runs (crestd
    // expands the text it is sent).
    if (!spec_text.empty()) {
      auto spec = sweep::ParseSweepSpec(spec_text);
      if (!spec.ok()) return spec.status();
      auto studies = sweep::StudiesOf(*spec);
      if (!studies.ok()) return studies.status();
      query.study_of = *std::move(studies);
    }
    auto db = OpenExisting(f.db);
    if (!db.ok()) return db.status();
    result.origin = f.db;
    report = answers::Compare(**db, query);
  }
  if (!report.ok()) return report.status();
  result.report = *std::move(report);
  PrinterFor(io)->Print(result);
  if (f.fail_on_regression && result.report.all.slower > 0) io.exit_code = kExitRegression;
  return absl::OkStatus();
}

}  // namespace

Command RegisterCompare(CLI::App& root) {
  auto flags = std::make_shared<CompareFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "compare",
      "Compare two selections of runs GEMM by GEMM: new/base ratios with intervals and verdicts "
      "(faster, same, slower beyond --threshold and beyond the noise; unresolved), by alignment "
      "class and study, and the GEMMs whose best algorithm changed; or, with --fleet, every "
      "device of a catalogue against its fleet");
  CLI::App& app = *cmd.app;
  AddOption(app, "--db", flags->db, "the result database (or the global --server)");
  const char* selectors =
      "runs: job:N, cublaslt:V, device:UUID, host:NAME, date:FROM..TO (UTC days YYYY-MM-DD, "
      "inclusive), gpu:MODEL or all; parts joined by ',' all hold (host:node7,cublaslt:130100)";
  AddOption(app, "--base", flags->base, StrCat("the base ", selectors));
  AddOption(app, "--new", flags->now, "the new runs, selected the same way");
  AddFlag(app, "--fleet", flags->fleet,
          "instead: every device of --db against the median of the other devices of its GPU "
          "model on its cuBLASLt version (a throttled or faulty GPU; needs 3 devices per "
          "GEMM)");
  AddOption(app, "--gpu", flags->gpu, "with --fleet: only this GPU model");
  AddOption(app, "--threshold", flags->threshold,
            "a change smaller than this is 'same': a fraction (0.03) or a percentage (3%)")
      .ShowDefault();
  AddModeFlags(app, flags->mode);
  AddOption(app, "--algo", flags->algo,
            "whose time answers for a GEMM: best (its fastest verified algorithm) or default "
            "(cuBLASLt's first choice)")
      .ShowDefault();
  AddOption(app, "--spec", flags->spec,
            "only the GEMMs of this sweep spec, summarised by its studies");
  AddFlag(app, "--fail-on-regression", flags->fail_on_regression,
          "exit with code 3 when any GEMM is slower, or with --fleet any device (after "
          "printing the report)");
  cmd.run = [flags](Io& io) { return RunCompare(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
