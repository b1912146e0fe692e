// `crest dff`: rank d_ff candidates near r·h by the time of the SwiGLU MLP.
#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/answers/store_answers.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/predictor.h"
#include "crest/wire/convert.h"
#include "dff_flags.h"
#include "gemm_flags.h"
#include "read_only_db.h"
#include "json_views.h"
#include "remote.h"
#include "table.h"

namespace crest::cli {
namespace {

struct DffCommandFlags {
  DffFlags window;
  int top = 10;
  std::string db;
  int64_t cublaslt = 0;
  ModeFlags mode;
};

// Largest power of two dividing the per-rank d_ff, capped at 1024: the
// alignment the MLP's N and K dimensions get from this d_ff.
int64_t PowerOfTwoFactor(int64_t d_ff, int64_t tp) {
  const auto v = static_cast<uint64_t>(d_ff / tp);
  return std::min<int64_t>(1024, static_cast<int64_t>(v & (~v + 1)));
}

void PrintSources(const std::string& model, const DffRanking& r, const std::string& db,
                  std::ostream& out) {
  if (db.empty()) {
    out << "source: predicted by " << model << "; not measured\n";
    return;
  }
  out << "source: " << db << ": " << r.measured << " of " << r.candidates.values.size()
      << " candidates measured, " << r.predicted << " predicted (by " << model
      << "; not measured)";
  if (r.missing > 0) out << ", " << r.missing << " with no answer (the model has no path)";
  out << "\n";
  for (const DffRow& row : r.rows) {
    if (row.source == Source::kMeasured) {
      out << "measured on: " << row.provenance << "\n";
      break;
    }
  }
}

// Says which rows the measurements cannot order.
void PrintTies(const DffRanking& r, std::ostream& out) {
  if (r.tied_with_best <= 1) return;
  std::vector<int64_t> shown;
  for (const DffRow& row : r.rows) {
    if (row.tie_group == 1) shown.push_back(row.d_ff);
  }
  out << "\n" << r.tied_with_best << " candidates are tied with the best (d_ff "
      << StrJoin(shown, ", ")
      << (static_cast<int64_t>(shown.size()) < r.tied_with_best ? ", ..." : "")
      << "): "
      << (r.rows.front().source == Source::kMeasured
              ? "their 95% intervals overlap, so the measurements cannot order them"
              : "their predicted times are within the model's expected error of the best, so "
                "the model cannot order them")
      << "; pick among them by other needs (parameters, alignment).\n";
}

// Rank of each row within its kind of number (rows come grouped by kind).
std::vector<int> RanksWithinKind(const std::vector<DffRow>& rows) {
  std::map<Source, int> seen;
  std::vector<int> ranks;
  for (const DffRow& row : rows) ranks.push_back(++seen[row.source]);
  return ranks;
}

// The rows of `kind` (all rows when kind is nullopt), one table.
Table DffTable(const DffQuery& q, const DffRanking& r, std::optional<Source> kind, bool plain) {
  Table table({{"rank"},
               {"tie"},
               {"d_ff"},
               {"pow2"},
               {"time_us"},
               {plain ? "time_low_us" : "interval_us", Table::Align::kLeft},
               {plain ? "time_high_us" : ""},
               {"TFLOP/s"},
               {"speedup"},
               {"mlp_params/rank"},
               {"params_delta"},
               {"source", Table::Align::kLeft}});
  const std::vector<int> ranks = RanksWithinKind(r.rows);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const DffRow& row = r.rows[i];
    if (kind && row.source != *kind) continue;
    const bool exact = row.time_low_us == row.time_high_us;
    const bool base = row.d_ff == r.candidates.baseline;
    const bool sped = row.speedup_vs_baseline > 0;
    table.AddRow({std::to_string(ranks[i]), std::to_string(row.tie_group),
                  std::to_string(row.d_ff) + (base && !plain ? "*" : ""),
                  std::to_string(PowerOfTwoFactor(row.d_ff, q.tp)), Fixed(row.time_us, 1),
                  plain ? Fixed(row.time_low_us, 1)
                        : (exact ? "-" : Fixed(row.time_low_us, 1) + "-" +
                                             Fixed(row.time_high_us, 1)),
                  plain ? Fixed(row.time_high_us, 1) : "", Fixed(row.tflops, 1),
                  sped ? Fixed(row.speedup_vs_baseline, 3) + (plain ? "" : "x") : "",
                  Grouped(row.mlp_params),
                  (row.params_delta > 0 && !plain ? "+" : "") + Grouped(row.params_delta),
                  std::string(SourceName(row.source))});
  }
  return table;
}

// One table per kind of number, each ranked within itself.
void PrintRowsByKind(const DffQuery& q, const DffRanking& r, const std::string& model,
                     std::ostream& out) {
  std::vector<Source> kinds;
  for (const DffRow& row : r.rows) {
    if (std::find(kinds.begin(), kinds.end(), row.source) == kinds.end()) {
      kinds.push_back(row.source);
    }
  }
  for (Source kind : kinds) {
    out << "\n";
    if (kinds.size() > 1) {
      const int64_t n = kind == Source::kMeasured ? r.measured : r.predicted;
      out << SourceName(kind) << " (" << n << " candidates"
          << (kind == Source::kPredicted ? StrCat(", by ", model) : std::string())
          << "), ranked among themselves only: a measured and a predicted time are not the "
             "same kind of number\n";
    }
    DffTable(q, r, kind, false).Print(out);
  }
}

void PrintHuman(const DffQuery& q, const GpuSpec& gpu, const DffRanking& r, const std::string& db,
                std::ostream& out) {
  const std::string model = DescribeModel(gpu, q.dtype);
  out << "d_ff near " << q.ratio.text << "*" << q.hidden << " on " << gpu.name << ": SwiGLU MLP "
      << (q.train ? "forward+backward" : "forward") << ", " << DTypeName(q.dtype) << ", "
      << q.tokens << " tokens, tp=" << q.tp
      << (q.fuse_gate_up ? ", gate+up fused" : ", gate and up separate") << "\n";
  PrintSources(model, r, db, out);
  out << "baseline floor(" << q.ratio.text << "*" << q.hidden << ") = " << r.candidates.naive;
  if (!r.candidates.baseline_note.empty()) out << " (" << r.candidates.baseline_note << ")";
  if (r.baseline_found) {
    out << ": " << Fixed(r.baseline.time_us, 1) << " us, " << Fixed(r.baseline.tflops, 1)
        << " TFLOP/s, " << SourceName(r.baseline.source) << "\n";
  } else {
    out << ": no answer (no speed-ups)\n";
  }
  out << r.evaluated << " of " << r.candidates.values.size() << " candidates from "
      << r.candidates.values.front() << " to " << r.candidates.values.back() << " (window +/-"
      << q.window << ", step " << std::lcm(q.align, q.tp) << ")"
      << (q.top > 0 ? StrCat("; the best ", q.top, " of each kind shown") : std::string())
      << "\n";
  if (r.rows.empty()) out << "\n(no candidate could be answered)\n";
  PrintRowsByKind(q, r, model, out);
  PrintTies(r, out);
  out << "\n* = baseline. interval = the 95% interval of a measured time, or the model's expected "
         "error around a predicted one. tie = tie group: rows whose intervals reach the group's "
         "fastest cannot be told apart. pow2 = largest power of two dividing d_ff/tp. "
         "speedup = the baseline's time / time, both of the same kind. mlp_params/rank = "
         "3*h*d_ff/tp, the MLP weights one tensor-parallel rank holds. `crest explain` shows any "
         "GEMM's tile/wave arithmetic.\n";
}

absl::Status RunDff(const DffCommandFlags& f, Io& io) {
  auto query = ToDffQuery(f.window, f.top);
  if (!query.ok()) return query.status();
  query->mode = ToMode(f.mode);
  auto gpu = FindGpu(f.window.gpu);
  if (!gpu.ok()) return gpu.status();
  if (auto s = CheckDtypePath(**gpu, query->dtype); !s.ok()) return s;
  absl::StatusOr<DffRanking> ranking;
  std::string source = f.db;
  if (!Remote().server.empty()) {
    if (!f.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
    if (f.cublaslt != 0) {
      return absl::InvalidArgumentError("cublaslt: --cublaslt is for --db; not with --server");
    }
    // The response counts candidates; the list for the header line is made here.
    auto candidates = GenerateDffCandidates(
        {query->hidden, query->ratio, query->window, query->align, query->tp});
    if (!candidates.ok()) return candidates.status();
    auto connection = DaemonChannel::Open(Remote());
    if (!connection.ok()) return connection.status();
    v1::QueryDffRequest request;
    wire::Fill(*query, std::string((*gpu)->name), &request);
    v1::QueryDffResponse response;
    if (auto s = CallUnary(*connection, &v1::Crest::Stub::QueryDff, request, &response); !s.ok()) {
      return s;
    }
    ranking = wire::RankingOf(response, *std::move(candidates));
    source = StrCat("crestd at ", Remote().server);
  } else if (f.db.empty()) {
    ranking = RankDff(*query, PredictorTimer(**gpu));
  } else {
    auto db = OpenForReading(f.db, f.cublaslt);
    if (!db.ok()) return db.status();
    ranking = answers::RankDffFromStore(*query, **gpu, *db->db, db->pin);
  }
  if (!ranking.ok()) return ranking.status();
  if (ranking->rows.empty()) {
    return absl::FailedPreconditionError(StrCat(
        "no candidate of the window could be answered: ", DTypeName(query->dtype),
        " has no path on ", (*gpu)->name, " in ", DescribeModel(**gpu, query->dtype)));
  }
  if (io.csv) {
    DffTable(*query, *ranking, std::nullopt, true).PrintCsv(io.out);
    return absl::OkStatus();
  }
  if (!io.json) {
    PrintHuman(*query, **gpu, *ranking, source, io.out);
    return absl::OkStatus();
  }
  nlohmann::json rows = nlohmann::json::array();
  const std::vector<int> ranks = RanksWithinKind(ranking->rows);
  for (size_t i = 0; i < ranking->rows.size(); ++i) {
    nlohmann::json row = DffRowJson(ranking->rows[i]);
    row["rank"] = ranks[i];  // within its kind (source)
    rows.push_back(std::move(row));
  }
  const DffRow& b = ranking->baseline;
  const bool found = ranking->baseline_found;
  io.out
      << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                        {"gpu", std::string((*gpu)->name)},
                        {"hidden", query->hidden},
                        {"ratio", query->ratio.text},
                        {"tokens", query->tokens},
                        {"tp", query->tp},
                        {"dtype", std::string(DTypeName(query->dtype))},
                        {"pass", f.window.pass},
                        {"fuse_gate_up", query->fuse_gate_up},
                        {"window", query->window},
                        {"align", query->align},
                        {"evaluated", ranking->evaluated},
                        {"db", f.db.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.db)},
                        {"server", Remote().server.empty() ? nlohmann::json(nullptr)
                                                           : nlohmann::json(Remote().server)},
                        {"coverage",
                         {{"candidates", ranking->candidates.values.size()},
                          {"measured", ranking->measured},
                          {"predicted", ranking->predicted},
                          {"missing", ranking->missing}}},
                        {"measure_mode",
                         {{"cache", CacheModeName(query->mode.cache)},
                          {"clocks", ClockPolicyName(query->mode.clocks)}}},
                        {"tied_with_best", ranking->tied_with_best},
                        {"ranking", "rows are grouped by source (measured, mixed, predicted), "
                                    "each ranked within its own source; rank is within the "
                                    "source"},
                        {"mlp_params_scope", "per tensor-parallel rank: 3*hidden*d_ff/tp"},
                        {"baseline",
                         {{"d_ff", b.d_ff},
                          {"naive_d_ff", ranking->candidates.naive},
                          {"time_us", found ? nlohmann::json(b.time_us) : nlohmann::json(nullptr)},
                          {"tflops", found ? nlohmann::json(b.tflops) : nlohmann::json(nullptr)},
                          {"mlp_params", b.mlp_params},
                          {"source", found ? nlohmann::json(SourceName(b.source)) : nlohmann::json(nullptr)}}},
                        {"candidates", rows}}
             .dump(2)
      << '\n';
  return absl::OkStatus();
}

}  // namespace

Command RegisterDff(CLI::App& root) {
  auto flags = std::make_shared<DffCommandFlags>();
  Command cmd;
  cmd.app = root.add_subcommand(
      "dff", "Rank SwiGLU d_ff candidates near r*h by the time of the whole MLP");
  AddDffFlags(*cmd.app, flags->window);
  cmd.app->add_option("--top", flags->top, "rows to show (0 = all)")->capture_default_str();
  cmd.app->add_option("--db", flags->db,
                      "answer from this database (measured where it has measurements, else its "
                      "predictions) instead of running the model");
  cmd.app->add_option("--cublaslt", flags->cublaslt,
                      "with --db: only measurements with this cuBLASLt version (default: newest)");
  AddModeFlags(*cmd.app, flags->mode);
  cmd.run = [flags](Io& io) { return RunDff(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
