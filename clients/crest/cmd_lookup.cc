// `crest lookup`: the best known result for one GEMM, from a database.
#include <memory>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/answers/store_answers.h"
#include "crest/measure/clock_policy.h"
#include "crest/wire/convert.h"
#include "gemm_flags.h"
#include "read_only_db.h"
#include "json_views.h"
#include "remote.h"
#include "table.h"

namespace crest::cli {
namespace {

struct LookupFlags {
  GemmFlags gemm;
  std::string gpu;
  std::string db;
  int64_t cublaslt = 0;
  ModeFlags mode;
};

nlohmann::json MeasuredJson(const store::MeasurementRow& r) {
  const auto& a = r.result.algo;
  const auto& s = r.result.stats;
  return {{"source", SourceName(Source::kMeasured)},
          {"time_us", s.median_us},
          {"tflops", r.result.tflops},
          {"stats",
           {{"median_us", s.median_us},
            {"mean_us", s.mean_us},
            {"min_us", s.min_us},
            {"stdev_us", s.stdev_us},
            {"samples", s.samples},
            {"ci_low_us", s.ci_low_us},
            {"ci_high_us", s.ci_high_us},
            {"sm_clock_mhz", s.sm_clock_mhz},
            {"power_w", s.power_w},
            {"throttle_reasons", measure::DescribeReasons(s.throttle_reasons)},
            {"discarded", s.discarded},
            {"clock_note", r.result.clock_note}}},
          {"algo",
           {{"algo_id", a.algo_id},
            {"tile", a.tile},
            {"tile_m", a.tile_m},
            {"tile_n", a.tile_n},
            {"stages", a.stages},
            {"split_k", a.split_k},
            {"reduction_scheme", a.reduction_scheme},
            {"swizzle", a.swizzle},
            {"custom_option", a.custom_option},
            {"cluster_shape", a.cluster_shape}}},
          {"tiles", r.tiles},
          {"waves", r.waves},
          {"tile_efficiency", r.tile_efficiency},
          {"wave_efficiency", r.wave_efficiency},
          {"verified", r.result.verified},
          {"cache_mode", CacheModeName(r.mode.cache)},
          {"clock_policy", ClockPolicyName(r.mode.clocks)},
          {"settled_clock_mhz", r.settled_clock_mhz},
          {"leading_dims", {{"lda", r.lda}, {"ldb", r.ldb}, {"ldc", r.ldc}}},
          {"device", DeviceJson(r.device)},
          {"software", SoftwareJson(r.software)}};
}

nlohmann::json PredictedJson(const store::PredictionRow& p) {
  return {{"source", SourceName(Source::kPredicted)},
          {"model_version", p.model_version},
          {"time_us", p.time_us},
          {"tflops", p.tflops},
          {"tile", {{"m", p.tile_m}, {"n", p.tile_n}}},
          {"tiles", p.tiles},
          {"waves", p.waves},
          {"tile_efficiency", p.tile_efficiency},
          {"wave_efficiency", p.wave_efficiency},
          {"expected_error", p.expected_error},
          {"bound", p.bound}};
}

absl::Status RunLookup(const LookupFlags& f, Io& io) {
  auto gpu = FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto gemm = ToGemm(f.gemm);
  if (!gemm.ok()) return gemm.status();
  const GemmShape& g = *gemm;
  absl::StatusOr<answers::GemmAnswer> answer;
  std::string source = f.db;
  if (!Remote().server.empty()) {
    if (!f.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
    auto connection = DaemonChannel::Open(Remote());
    if (!connection.ok()) return connection.status();
    v1::LookupGemmRequest request;
    wire::Fill(g, request.mutable_gemm());
    request.set_gpu(std::string((*gpu)->name));
    request.mutable_pin()->set_cublaslt(f.cublaslt);
    wire::Fill(ToMode(f.mode), request.mutable_mode());
    v1::LookupGemmResponse response;
    if (auto s = CallUnary(*connection, &v1::Crest::Stub::LookupGemm, request, &response);
        !s.ok()) {
      return s;
    }
    answer = wire::AnswerOf(response, g, std::string((*gpu)->name));
    source = StrCat("crestd at ", Remote().server);
  } else {
    if (f.db.empty()) return absl::InvalidArgumentError("db: give --db FILE or --server HOST:PORT");
    auto db = OpenForReading(f.db, f.cublaslt);
    if (!db.ok()) return db.status();
    answer = answers::LookupGemm(g, **gpu, *db->db, db->pin, ToMode(f.mode));
  }
  if (!answer.ok()) return answer.status();
  if (!answer->measured && !answer->predicted) {
    return absl::FailedPreconditionError(StrCat("no result in ", source, " for m=", g.m, " n=", g.n,
                                                " k=", g.k, " batch=", g.batch, " ",
                                                DTypeName(g.dtype), " ", g.Layout(), " on ",
                                                (*gpu)->name, "; `crest explain` predicts it"));
  }
  nlohmann::json result =
      answer->measured ? MeasuredJson(*answer->measured) : PredictedJson(*answer->predicted);
  if (io.json) {
    nlohmann::json doc = {{"schema_version", kJsonSchemaVersion},
                          {"gpu", std::string((*gpu)->name)},
                          {"gemm", GemmJson(g)}};
    doc.update(result);
    io.out << doc.dump(2) << '\n';
    return absl::OkStatus();
  }
  io.out << "GEMM M=" << g.m << " N=" << g.n << " K=" << g.k << " batch=" << g.batch << " "
         << DTypeName(g.dtype) << " " << g.Layout() << " on " << (*gpu)->name << "\n";
  if (answer->measured) {
    const auto& r = *answer->measured;
    const auto& s = r.result.stats;
    const auto& a = r.result.algo;
    io.out << "MEASURED on " << answers::DescribeProvenance(r.device, r.software) << "\n"
           << "  " << CacheModeName(r.mode.cache) << " L2, " << ClockPolicyName(r.mode.clocks)
           << " clocks: SM " << Fixed(s.sm_clock_mhz, 0) << " MHz, " << Fixed(s.power_w, 0)
           << " W, clock-event reasons " << measure::DescribeReasons(s.throttle_reasons) << ", "
           << s.discarded << " samples discarded"
           << (r.result.clock_note.empty() ? "" : " (" + r.result.clock_note + ")") << "\n"
           << "  median " << Fixed(s.median_us, 2) << " us (95% interval " << Fixed(s.ci_low_us, 2)
           << "-" << Fixed(s.ci_high_us, 2) << ", mean " << Fixed(s.mean_us, 2) << ", min "
           << Fixed(s.min_us, 2) << ", stdev " << Fixed(s.stdev_us, 2) << ", " << s.samples
           << " samples), " << Fixed(r.result.tflops, 1) << " TFLOP/s, verified\n"
           << "  algorithm " << a.algo_id << ": tile " << a.tile_m << "x" << a.tile_n << " (id "
           << a.tile << "), stages " << a.stages << ", split-K " << a.split_k << ", reduction "
           << a.reduction_scheme << ", swizzle " << a.swizzle << ", custom " << a.custom_option
           << ", cluster " << a.cluster_shape << "\n"
           << "  " << r.tiles << " tiles in " << r.waves << " wave(s); tile efficiency "
           << Fixed(100 * r.tile_efficiency, 1) << "%, wave efficiency "
           << Fixed(100 * r.wave_efficiency, 1) << "%\n";
  } else {
    const auto& p = *answer->predicted;
    io.out << "PREDICTED (model " << p.model_version << "; nothing measured in " << source
           << ")\n  " << Fixed(p.time_us, 1) << " us, " << Fixed(p.tflops, 1) << " TFLOP/s, tile "
           << p.tile_m << "x" << p.tile_n << ", " << p.tiles << " tiles in " << p.waves
           << " wave(s), " << p.bound << "-bound; expected error +/-"
           << Fixed(100 * p.expected_error, 1) << "%\n";
  }
  return absl::OkStatus();
}

}  // namespace

Command RegisterLookup(CLI::App& root) {
  auto flags = std::make_shared<LookupFlags>();
  Command cmd;
  cmd.app =
      root.add_subcommand("lookup", "Show the best known result for one GEMM from a database");
  CLI::App& app = *cmd.app;
  AddGemmFlags(app, flags->gemm);
  app.add_option("--gpu", flags->gpu, "catalogued GPU")->required();
  app.add_option("--db", flags->db, "database file (or --server: ask a crestd)");
  app.add_option("--cublaslt", flags->cublaslt,
                 "only measurements with this cuBLASLt version (e.g. 130100); default: newest");
  AddModeFlags(app, flags->mode);
  cmd.run = [flags](Io& io) { return RunLookup(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
