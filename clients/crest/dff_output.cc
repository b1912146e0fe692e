// `crest dff`'s answer as text, JSON and CSV.
#include <algorithm>
#include <bit>
#include <numeric>

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/calibration_fit.h"
#include "crest/tuner/device_info.h"
#include "json_views.h"
#include "outputs.h"
#include "results.h"

namespace crest::cli {
namespace {

// Largest power of two dividing the per-rank d_ff, capped at 1024: the
// alignment the MLP's N and K dimensions get from this d_ff.
int64_t PowerOfTwoFactor(int64_t d_ff, int64_t tp) {
  const auto v = static_cast<uint64_t>(d_ff / tp);
  return std::min<int64_t>(1024, static_cast<int64_t>(v & (~v + 1)));
}

std::string Pass(const tuner::DffQuery& q) { return q.train ? "train" : "fwd"; }

// The kinds of number in the answer, in the order rows list them.
std::vector<tuner::Source> Kinds(const tuner::DffRanking& r) {
  std::vector<tuner::Source> kinds;
  for (const tuner::DffRow& row : r.rows) {
    if (std::find(kinds.begin(), kinds.end(), row.source) == kinds.end()) {
      kinds.push_back(row.source);
    }
  }
  return kinds;
}

// A row's standing in the answer's race: "leader", "tied 1.002 (0.998-1.006)",
// "slower 1.012 (…)"; "-" when the race did not time it. Plain (CSV): the
// verdict and the three figures in their own cells.
void AddRaceCells(const tuner::DffRow& row, bool plain, std::vector<std::string>& cells) {
  const bool timed = !row.race_verdict.empty();
  if (plain) {
    cells.push_back(row.race_verdict);
    for (double v : {row.race_ratio, row.race_ratio_low, row.race_ratio_high}) {
      cells.push_back(timed ? Fixed(v, 4) : "");
    }
    return;
  }
  if (!timed) {
    cells.push_back("-");
  } else if (row.race_verdict == "leader") {
    cells.push_back("leader");
  } else {
    cells.push_back(StrCat(row.race_verdict, " ", Fixed(row.race_ratio, 3), " (",
                           Fixed(row.race_ratio_low, 3), "-", Fixed(row.race_ratio_high, 3), ")"));
  }
}

// The rows of `kind` (all rows when plain, for CSV), ranks counted over the
// whole answer.
Table RowsTable(const DffResult& res, std::optional<tuner::Source> kind, bool plain) {
  const tuner::DffQuery& q = res.query;
  const tuner::DffRanking& r = res.ranking;
  std::vector<Table::Column> columns = {
      {"rank"}, {"tie"},     {"d_ff"},
      {"pow2"}, {"time_us"}, {plain ? "time_low_us" : "interval_us", Table::Align::kLeft}};
  if (plain) columns.push_back({"time_high_us"});
  for (Table::Column c : std::vector<Table::Column>{{"TFLOP/s"}, {"speedup"}}) columns.push_back(c);
  if (plain) columns.push_back({"speedup_basis", Table::Align::kLeft});
  for (Table::Column c : std::vector<Table::Column>{{"mlp_params/rank"},
                                                    {"params_delta"},
                                                    {"source", Table::Align::kLeft},
                                                    {"run", Table::Align::kLeft}}) {
    columns.push_back(c);
  }
  const bool raced = r.race.has_value();
  if (raced) {
    columns.push_back({"race", Table::Align::kLeft});
    if (plain) {
      for (const char* c : {"race_ratio", "race_ratio_low", "race_ratio_high"})
        columns.push_back({c});
    }
  }
  Table table(std::move(columns));
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const tuner::DffRow& row = r.rows[i];
    if (kind && row.source != *kind) continue;
    const bool exact = row.time_low_us == row.time_high_us;
    const bool base = row.d_ff == r.candidates.baseline;
    std::vector<std::string> cells = {
        std::to_string(i + 1),
        std::to_string(row.tie_group),
        std::to_string(row.d_ff) + (base && !plain ? "*" : ""),
        std::to_string(PowerOfTwoFactor(row.d_ff, q.dff.tp)),
        Fixed(row.time_us, 1),
        plain ? Fixed(row.time_low_us, 1)
              : (exact ? "-" : Fixed(row.time_low_us, 1) + "-" + Fixed(row.time_high_us, 1))};
    if (plain) cells.push_back(Fixed(row.time_high_us, 1));
    cells.push_back(Fixed(row.tflops, 1));
    cells.push_back(SpeedupCell(row.speedup_vs_baseline, row.source, row.speedup_basis, plain));
    if (plain)
      cells.push_back(
          row.speedup_vs_baseline > 0 ? std::string(tuner::SourceName(row.speedup_basis)) : "");
    cells.push_back(Grouped(row.mlp_params));
    cells.push_back((row.params_delta > 0 && !plain ? "+" : "") + Grouped(row.params_delta));
    cells.push_back(std::string(tuner::SourceName(row.source)));
    cells.push_back(RunColumn(row.runs, row.pooled));
    if (raced) AddRaceCells(row, plain, cells);
    table.AddRow(std::move(cells));
  }
  return table;
}

// How a race's verdicts were reached, and the error rate they hold at.
std::string RaceMethod(const tuner::DffRaceInfo& race) {
  if (race.error_rate <= 0) {
    return StrCat(
        "paired ratios to its leader with 95% intervals tested at every round, "
        "uncorrected (a race stored by the first procedure: its \"slower\" verdicts "
        "hold at no stated error rate), tied within 1 +/- ",
        Fixed(race.resolution, 3));
  }
  return StrCat(
      "paired ratios with intervals simultaneous over every pair and round, so that "
      "all verdicts hold together at a ",
      Fixed(100 * race.error_rate, 0),
      "% family-wise error rate: slower when the interval to some candidate lies "
      "above 1 + ",
      Fixed(race.resolution, 3),
      ", tied when the interval to the leader "
      "lies within 1 +/- ",
      Fixed(race.resolution, 3));
}

void PrintSources(const DffResult& res, const std::string& model, std::ostream& out) {
  const tuner::DffRanking& r = res.ranking;
  if (!res.origin.database) {
    out << "answered by: " << res.origin.description << ", predicted by " << model
        << "; not measured\n";
    return;
  }
  out << "answered by: " << res.origin.description << ": " << r.measured << " of "
      << r.candidates.values.size() << " candidates measured ("
      << tuner::CacheModeName(res.origin.options.mode.cache) << " L2, "
      << tuner::ClockPolicyName(res.origin.options.mode.clocks) << " clocks), " << r.predicted
      << " predicted (by " << model << "; not measured)";
  if (r.replayed > 0) {
    out << ", " << r.replayed << " replayed (simulated from a recorded table; not measured)";
  }
  if (r.missing > 0) out << ", " << r.missing << " with no answer (the model has no path)";
  out << "\n";
  for (const tuner::DffRow& row : r.rows) {
    if (tuner::FromRuns(row.source)) {
      out << tuner::SourceName(row.source) << " on: " << row.provenance << "\n";
      break;
    }
  }
  if (const std::string runs = RunsLine(r.runs, res.origin.options); !runs.empty()) {
    out << runs << "\n";
  }
  if (r.runs.size() > 1 && res.origin.options.runs == answers::RunChoice::kLatest) {
    out << "note: rows come from " << r.runs.size()
        << " runs; times of different runs (and speed-ups between them) compare GPU states "
           "minutes or days apart as well as shapes\n";
  }
  if (r.race) {
    const tuner::DffRaceInfo& race = *r.race;
    // The race timed the run of the first measured (or replayed) row.
    const auto raced = std::find_if(r.rows.begin(), r.rows.end(), [](const tuner::DffRow& row) {
      return tuner::FromRuns(row.source);
    });
    const bool simulated = raced != r.rows.end() && raced->source == tuner::Source::kReplayed;
    out << "race: the " << race.candidates << " leading candidates of "
        << tuner::DescribeRun(race.run)
        << " timed again against each other, every GEMM with the run's algorithm, in "
        << race.rounds << " interleaved rounds (race " << race.race_id << ", "
        << Fixed(race.seconds, 1) << (simulated ? " s on the simulated device" : " s on the device")
        << ", warm-up " << (race.settled ? "settled" : "not settled: its rounds may weigh drift")
        << ", " << race.retaken
        << " timing(s) retaken after an idle gap, stopped: " << race.stop_reason
        << "); among them the order and tie groups are the race's: " << RaceMethod(race) << "\n";
  } else if (!r.race_note.empty()) {
    out << "note: " << r.race_note << "; the ranking is the per-GEMM pass's\n";
  }
  if (r.measured_across_runs > 0) {
    out << "note: " << r.measured_across_runs
        << " candidate(s) were measured only across runs (no one run measured all of their "
           "GEMMs), so they are answered predicted; --runs all pools the runs\n";
  }
}

void PrintHeadline(const tuner::DffRanking& r, std::ostream& out) {
  if (r.rows.empty()) return;
  const tuner::DffRow& best = r.rows.front();
  out << "best: d_ff " << best.d_ff << ", " << Fixed(best.time_us, 1) << " us, "
      << Fixed(best.tflops, 1) << " TFLOP/s, "
      << SpeedupCell(best.speedup_vs_baseline, best.source, best.speedup_basis, false)
      << " the baseline, " << tuner::SourceName(best.source);
  if (!best.runs.empty()) out << " (" << RunColumn(best.runs, best.pooled) << ")";
  if (r.tied_with_best > 1) {
    std::vector<int64_t> shown;
    for (const tuner::DffRow& row : r.rows) {
      if (row.tie_group == 1 && row.d_ff != best.d_ff) shown.push_back(row.d_ff);
    }
    const bool all_shown = static_cast<int64_t>(shown.size()) == r.tied_with_best - 1;
    out << "; tied with it: " << r.tied_with_best - 1 << " ("
        << (shown.empty() ? std::string("--top 0 lists them")
                          : StrCat("d_ff ", StrJoin(shown, ", "), all_shown ? "" : ", ..."))
        << "): "
        << (r.race ? StrCat("the race's paired ratios cannot tell them apart at 1 +/- ",
                            Fixed(r.race->resolution, 3))
                   : StrCat("the ",
                            best.source == tuner::Source::kPredicted ? "model's expected error"
                                                                     : "95% intervals",
                            " cannot order them"))
        << "; pick among them by other needs (parameters, alignment)";
  }
  out << "\n";
}

nlohmann::json RaceJson(const tuner::DffRanking& r) {
  if (!r.race) {
    return r.race_note.empty() ? nlohmann::json(nullptr) : nlohmann::json{{"note", r.race_note}};
  }
  const tuner::DffRaceInfo& race = *r.race;
  return {{"race_id", race.race_id},
          {"job", race.run.job_id},
          {"candidates", race.candidates},
          {"rounds", race.rounds},
          {"retaken", race.retaken},
          {"resolution", race.resolution},
          {"seconds", race.seconds},
          {"settled", race.settled},
          {"stop_reason", race.stop_reason},
          {"error_rate", race.error_rate},
          {"rule", StrCat("the raced rows lead their kind in the race's order; ", RaceMethod(race),
                          "; unresolved rows are counted tied")}};
}

}  // namespace

void Text(const DffResult& res, std::ostream& out) {
  const tuner::DffQuery& q = res.query;
  const tuner::DffRanking& r = res.ranking;
  const std::string model = tuner::DescribeModel(res.gpu, q.dtype);
  out << "d_ff near " << q.dff.ratio.text << "*" << q.dff.hidden << " on " << res.gpu.name
      << ": SwiGLU MLP " << (q.train ? "forward+backward" : "forward") << ", "
      << tuner::DTypeName(q.dtype) << ", " << q.tokens << " tokens, tp=" << q.dff.tp
      << (q.fuse_gate_up ? ", gate+up fused" : ", gate and up separate") << "\n";
  PrintSources(res, model, out);
  out << "baseline floor(" << q.dff.ratio.text << "*" << q.dff.hidden
      << ") = " << r.candidates.naive;
  if (!r.candidates.baseline_note.empty()) out << " (" << r.candidates.baseline_note << ")";
  if (r.baseline_found) {
    out << ": " << Fixed(r.baseline.time_us, 1) << " us, " << Fixed(r.baseline.tflops, 1)
        << " TFLOP/s, " << tuner::SourceName(r.baseline.source);
    if (tuner::FromRuns(r.baseline.source))
      out << " (" << RunColumn(r.baseline.runs, r.baseline.pooled) << ")";
    if (r.predicted_baseline_us > 0)
      out << "; predicted " << Fixed(r.predicted_baseline_us, 1) << " us";
    out << "\n";
  } else {
    out << ": no answer (no speed-ups)\n";
  }
  PrintHeadline(r, out);
  out << r.evaluated << " of " << r.candidates.values.size() << " candidates from "
      << r.candidates.values.front() << " to " << r.candidates.values.back() << " (window +/-"
      << q.dff.window << ", step " << std::lcm(q.dff.align, q.dff.tp) << ")"
      << (q.top > 0 ? StrCat("; the best ", q.top, " of each kind shown") : std::string()) << "\n";
  const std::vector<tuner::Source> kinds = Kinds(r);
  for (tuner::Source kind : kinds) {
    out << "\n";
    if (kinds.size() > 1) {
      const int64_t n = kind == tuner::Source::kMeasured   ? r.measured
                        : kind == tuner::Source::kReplayed ? r.replayed
                                                           : r.predicted;
      out << tuner::SourceName(kind) << " (" << n << " candidates"
          << (kind == tuner::Source::kPredicted ? StrCat(", by ", model) : std::string())
          << "): times of different kinds (measured, replayed, predicted) are not the same kind of "
             "number, so they are "
             "never tied together; the headline is the row with the largest speed-up over a "
             "baseline of its own kind\n";
    }
    RowsTable(res, kind, false).Print(out);
  }
  bool other_basis = false;
  for (const tuner::DffRow& row : r.rows)
    other_basis = other_basis || (row.speedup_vs_baseline > 0 && row.speedup_basis != row.source);
  out << "\n* = baseline. interval = for a measured or replayed time, the sum over the row's "
         "GEMMs of each median's interval (95% from 6 or more samples; from fewer, the samples' "
         "range, whose lower coverage `crest lookup` prints), holding whenever every GEMM's "
         "does (pooled: covering the runs' intervals); for a predicted one, the sum of its GEMMs' "
         "intervals, each the model's error for the GEMM's class (layout, kernel, alignment) on "
         "d_ff windows left out of its fit, "
      << Fixed(100 * tuner::kIntervalQuantile, 0)
      << "th percentile (`crest calibrate` prints how often they held). " << tuner::kTieRule
      << ". pow2 = largest power of two dividing d_ff/tp. speedup = the baseline's time / time, "
         "both of the same kind"
      << (other_basis ? StrCat(" (", kPredictedBasisNote, ")") : std::string())
      << ". mlp_params/rank = 3*h*d_ff/tp, the MLP weights one tensor-parallel rank holds. run = "
         "the sweep job a measured or replayed time comes from. "
      << (r.race ? StrCat("race = the raced rows' verdicts: their time over the race leader's "
                          "in the same rounds (geometric mean, and its interval); ",
                          RaceMethod(*r.race),
                          "; otherwise unresolved (counted tied); the raced rows lead, in the "
                          "race's order and tie groups, and their times are still the pass's. ")
                 : std::string())
      << "`crest explain` shows any GEMM's tile/wave arithmetic.\n";
}

Table Csv(const DffResult& res) { return RowsTable(res, std::nullopt, true); }

nlohmann::json Json(const DffResult& res) { return Json(res, DffRowsIn::kDocument); }

nlohmann::json Json(const DffResult& res, DffRowsIn rows_in) {
  const tuner::DffQuery& q = res.query;
  const tuner::DffRanking& r = res.ranking;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; rows_in == DffRowsIn::kDocument && i < r.rows.size(); ++i) {
    rows.push_back(DffRowJson(r.rows[i], static_cast<int64_t>(i + 1)));
  }
  const tuner::DffRow& b = r.baseline;
  const bool found = r.baseline_found;
  const bool db = res.origin.database;
  const auto null = nlohmann::json(nullptr);
  nlohmann::json headline = null;
  if (!r.rows.empty()) {
    const tuner::DffRow& best = r.rows.front();
    headline = {{"d_ff", best.d_ff},
                {"source", tuner::SourceName(best.source)},
                {"time_us", best.time_us},
                {"speedup_vs_baseline", best.speedup_vs_baseline},
                {"speedup_basis", tuner::SourceName(best.speedup_basis)},
                {"tied_with_it", r.tied_with_best - 1},
                {"rule",
                 "the row with the largest speed-up over a baseline of its own kind "
                 "(measured wins an equal speed-up)"}};
  }
  nlohmann::json doc = {
      {"schema_version", kJsonSchemaVersion},
      {"gpu", std::string(res.gpu.name)},
      {"hidden", q.dff.hidden},
      {"ratio", q.dff.ratio.text},
      {"tokens", q.tokens},
      {"tp", q.dff.tp},
      {"dtype", std::string(tuner::DTypeName(q.dtype))},
      {"pass", Pass(q)},
      {"fuse_gate_up", q.fuse_gate_up},
      {"window", q.dff.window},
      {"align", q.dff.align},
      {"evaluated", r.evaluated},
      {"coverage",
       {{"candidates", r.candidates.values.size()},
        {"measured", r.measured},
        {"predicted", r.predicted},
        {"replayed", r.replayed},
        {"missing", r.missing},
        {"measured_across_runs", r.measured_across_runs}}},
      {"measure_mode",
       db ? nlohmann::json{{"cache", tuner::CacheModeName(res.origin.options.mode.cache)},
                           {"clocks", tuner::ClockPolicyName(res.origin.options.mode.clocks)}}
          : null},
      {"runs", RunsJson(r.runs)},
      {"race", RaceJson(r)},
      {"headline", headline},
      {"tied_with_best", r.tied_with_best},
      {"tie_rule", tuner::kTieRule},
      {"ranking",
       "rank 1 is the headline best; rows of its kind first, then the other kinds "
       "(measured, mixed, predicted), each listed tie group by tie group, fastest "
       "first; rank counts over the whole answer"},
      {"mlp_params_scope", "per tensor-parallel rank: 3*hidden*d_ff/tp"},
      {"baseline",
       {{"d_ff", b.d_ff},
        {"naive_d_ff", r.candidates.naive},
        {"time_us", found ? nlohmann::json(b.time_us) : null},
        {"tflops", found ? nlohmann::json(b.tflops) : null},
        {"mlp_params", b.mlp_params},
        {"source", found ? nlohmann::json(tuner::SourceName(b.source)) : null},
        {"provenance", found ? nlohmann::json(b.provenance) : null},
        {"time_low_us", found ? nlohmann::json(b.time_low_us) : null},
        {"time_high_us", found ? nlohmann::json(b.time_high_us) : null},
        {"pooled", found && b.pooled},
        {"runs", RunsJson(b.runs)},
        {"predicted_time_us",
         r.predicted_baseline_us > 0 ? nlohmann::json(r.predicted_baseline_us) : null}}},
      {"candidates", rows}};
  AddOriginJson(res.origin, doc);
  return doc;
}

}  // namespace crest::cli
