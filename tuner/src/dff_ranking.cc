#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <map>
#include <string>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"

namespace crest::tuner {
namespace {

DffRow RowOf(const DffQuery& q, int64_t d_ff, const std::vector<GemmShape>& gemms, Timing t) {
  DffRow row;
  row.d_ff = d_ff;
  row.time_us = t.time_us;
  row.time_low_us = LowOf(t);
  row.time_high_us = HighOf(t);
  double flops = 0;
  for (const GemmShape& g : gemms) flops += g.Flops();
  row.tflops = flops / row.time_us / 1e6;
  row.mlp_params = MlpParams(q, d_ff);
  row.source = t.source;
  row.provenance = std::move(t.provenance);
  row.device = std::move(t.device);
  row.software = std::move(t.software);
  row.runs = std::move(t.runs);
  row.pooled = t.pooled;
  return row;
}

// Keeps the first `top` rows of each kind (rows ranked).
std::vector<DffRow> KeepTopOfEachKind(std::vector<DffRow> ranked, int top) {
  std::vector<DffRow> kept;
  std::map<Source, int> shown;
  for (DffRow& r : ranked) {
    if (++shown[r.source] <= top) kept.push_back(std::move(r));
  }
  return kept;
}

// Each row's speed-up: against the baseline's time where the baseline was
// answered in the row's kind, else against the predicted baseline.
void SetSpeedups(DffRanking& out, std::vector<DffRow>& rows) {
  for (DffRow& row : rows) {
    double base = 0;
    if (out.baseline_found && out.baseline.source == row.source) {
      base = out.baseline.time_us;
      row.speedup_basis = row.source;
    } else if (out.predicted_baseline_us > 0) {
      base = out.predicted_baseline_us;
      row.speedup_basis = Source::kPredicted;
    } else if (out.baseline_found && out.baseline.source == Source::kPredicted) {
      base = out.baseline.time_us;
      row.speedup_basis = Source::kPredicted;
    }
    if (base > 0 && row.time_us > 0) row.speedup_vs_baseline = base / row.time_us;
  }
}

// The runs the rows come from, each once.
std::vector<RunInfo> RunsOf(const std::vector<DffRow>& rows) {
  std::vector<RunInfo> runs;
  for (const DffRow& row : rows) MergeRuns(runs, row.runs);
  return runs;
}

// The race of the measured headline's run, applied when it fits.
absl::Status UseRace(const DffRaceFinder& races, std::vector<DffRow>& rows, DffRanking& out) {
  if (!races) return absl::OkStatus();
  const auto lead =
      std::find_if(rows.begin(), rows.end(), [](const DffRow& r) { return FromRuns(r.source); });
  if (lead == rows.end() || lead->pooled || lead->runs.size() != 1) return absl::OkStatus();
  auto race = races(lead->runs.front());
  if (!race.ok()) return race.status();
  if (!race->has_value()) return absl::OkStatus();
  out.race_note = ApplyRace(**race, rows);
  if (out.race_note.empty()) out.race = (*race)->info;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& q, int64_t d_ff) {
  ShapeOptions options;
  options.include_backward = q.train;
  options.fuse_gate_up = q.fuse_gate_up;
  return MlpGemms(q.tokens, q.dff.hidden, d_ff, q.dff.tp, q.dtype, options);
}

int64_t MlpParams(const DffQuery& q, int64_t d_ff) { return 3 * q.dff.hidden * d_ff / q.dff.tp; }

std::string DffStudyKey(const DffQuery& q) {
  return StrCat("dff hidden=", q.dff.hidden, " tokens=", q.tokens, " tp=", q.dff.tp, " ",
                DTypeName(q.dtype), " ", q.train ? "train" : "fwd", " ",
                q.fuse_gate_up ? "fused" : "separate");
}

absl::StatusOr<DffPlan> PlanDff(const DffQuery& q) {
  if (q.top < 0) {
    return absl::InvalidArgumentError(StrCat("top must be 0 (all) or more (got ", q.top, ")"));
  }
  auto candidates = GenerateDffCandidates(q.dff);
  if (!candidates.ok()) return candidates.status();
  DffPlan plan;
  plan.candidates = *std::move(candidates);
  plan.gemms.reserve(plan.candidates.values.size());
  for (int64_t d_ff : plan.candidates.values) {
    auto gemms = DffCandidateGemms(q, d_ff);
    if (!gemms.ok()) return gemms.status();
    plan.gemms.push_back(*std::move(gemms));
  }
  return plan;
}

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const GemmSetTimer& timer,
                                   const GemmSetTimer& predict) {
  auto plan = PlanDff(q);
  if (!plan.ok()) return plan.status();
  return RankDff(q, *plan, timer, predict);
}

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const GemmTimer& timer) {
  return RankDff(q, EachGemm(timer));
}

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const DffPlan& plan,
                                   const GemmSetTimer& timer, const GemmSetTimer& predict,
                                   const DffRaceFinder& races, const GemmSetSummer& sum) {
  const GemmSetSummer summed =
      sum ? sum : GemmSetSummer([&timer](std::span<const GemmShape> set) -> absl::StatusOr<Timing> {
        auto parts = timer(set);
        if (!parts.ok()) return parts.status();
        return SumTimings(*parts);
      });
  DffRanking out;
  out.candidates = plan.candidates;
  std::vector<DffRow> rows;
  rows.reserve(out.candidates.values.size());
  const std::vector<GemmShape>* baseline_gemms = nullptr;
  for (size_t i = 0; i < out.candidates.values.size(); ++i) {
    const int64_t d_ff = out.candidates.values[i];
    if (d_ff == out.candidates.baseline) baseline_gemms = &plan.gemms[i];
    auto total = summed(plan.gemms[i]);
    if (!total.ok()) {
      if (q.skip_missing && absl::IsNotFound(total.status())) {
        ++out.missing;
        continue;
      }
      return total.status();
    }
    DffRow row = RowOf(q, d_ff, plan.gemms[i], *std::move(total));
    if (d_ff == out.candidates.baseline) {
      out.baseline = row;
      out.baseline_found = true;
    }
    if (row.source == Source::kMeasured) ++out.measured;
    if (row.source == Source::kReplayed) ++out.replayed;
    if (row.source == Source::kPredicted) ++out.predicted;
    rows.push_back(std::move(row));
  }
  out.evaluated = static_cast<int64_t>(rows.size());
  if (!out.baseline_found) out.baseline.d_ff = out.candidates.baseline;
  out.baseline.mlp_params = MlpParams(q, out.candidates.baseline);
  for (DffRow& row : rows) row.params_delta = row.mlp_params - out.baseline.mlp_params;
  const bool other_kinds = std::any_of(rows.begin(), rows.end(), [&](const DffRow& r) {
    return !out.baseline_found || r.source != out.baseline.source;
  });
  if (predict && baseline_gemms != nullptr && other_kinds &&
      !(out.baseline_found && out.baseline.source == Source::kPredicted)) {
    auto parts = predict(*baseline_gemms);
    if (parts.ok()) out.predicted_baseline_us = SumTimings(*parts).time_us;
  }
  SetSpeedups(out, rows);
  out.baseline.speedup_vs_baseline = out.baseline_found ? 1.0 : 0;
  out.baseline.speedup_basis = out.baseline_found ? out.baseline.source : Source::kUnknown;
  std::vector<std::pair<Source, double>> speedups;
  for (const DffRow& r : rows) speedups.emplace_back(r.source, r.speedup_vs_baseline);
  out.headline = HeadlineKind(speedups);
  RankRows(
      rows,
      [](const DffRow& r) -> std::optional<TieKey> {
        return TieKey{r.source, r.time_us, r.time_low_us};
      },
      &DffRow::tie_group, out.headline);
  if (auto s = UseRace(races, rows, out); !s.ok()) return s;
  for (const DffRow& r : rows) out.tied_with_best += r.tie_group == 1 ? 1 : 0;
  out.runs = RunsOf(rows);
  if (q.top > 0) rows = KeepTopOfEachKind(std::move(rows), q.top);
  out.rows = std::move(rows);
  if (!out.rows.empty()) out.headline = out.rows.front().source;
  return out;
}

}  // namespace crest::tuner
