#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"

namespace crest::tuner {
namespace {

// Sets a new row's figures and kind; its labels are copied later
// (RowLabels). In place: a row is large, and this runs for every candidate.
void SetRow(const DffQuery& q, int64_t d_ff, const std::vector<GemmShape>& gemms, const SetSum& sum,
            DffRow& row) {
  row.d_ff = d_ff;
  row.time_us = sum.time_us;
  row.time_low_us = LowOf(sum);
  row.time_high_us = HighOf(sum);
  double flops = 0;
  for (const GemmShape& g : gemms) flops += g.Flops();
  row.tflops = flops / row.time_us / 1e6;
  row.mlp_params = MlpParams(q, d_ff);
  row.source = sum.source;
  row.pooled = sum.pooled;
}

void CopyLabels(const TimingLabels* labels, DffRow& row) {
  if (labels == nullptr) return;
  row.provenance = labels->provenance;
  row.device = labels->device;
  row.software = labels->software;
  row.runs = labels->runs;
}

// The candidates' labels, by d_ff (a plan's values are unique): a ranking
// copies them into the rows it keeps (and into the rows a race reads), not
// into every candidate's row; most candidates share one run's labels.
class RowLabels {
 public:
  void Add(int64_t d_ff, std::shared_ptr<const TimingLabels> labels) {
    entries_.emplace_back(d_ff, std::move(labels));
  }
  // Call after the last Add, before Fill and Runs.
  void Sort() {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.first < b.first; });
  }
  // Copies the row's labels into it, unless it holds them already.
  void Fill(DffRow& row) const {
    if (!row.provenance.empty() || !row.runs.empty()) return;
    CopyLabels(Find(row.d_ff), row);
  }
  // The runs `rows` come from, each once, in order of first appearance.
  std::vector<RunInfo> Runs(const std::vector<DffRow>& rows) const {
    std::vector<RunInfo> runs;
    std::unordered_set<const TimingLabels*> merged;
    for (const DffRow& row : rows) {
      const TimingLabels* labels = Find(row.d_ff);
      if (labels != nullptr && !labels->runs.empty() && merged.insert(labels).second) {
        MergeRuns(runs, labels->runs);
      }
    }
    return runs;
  }

 private:
  using Entry = std::pair<int64_t, std::shared_ptr<const TimingLabels>>;
  const TimingLabels* Find(int64_t d_ff) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), d_ff,
                               [](const Entry& e, int64_t v) { return e.first < v; });
    return it == entries_.end() || it->first != d_ff ? nullptr : it->second.get();
  }
  std::vector<Entry> entries_;
};

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

// The race of the measured headline's run, applied when it fits. The race
// reads the runs of the rows it orders: a race found fills every row's
// labels.
absl::Status UseRace(const DffRaceFinder& races, std::vector<DffRow>& rows, RowLabels& labels,
                     DffRanking& out) {
  if (!races) return absl::OkStatus();
  const auto lead =
      std::find_if(rows.begin(), rows.end(), [](const DffRow& r) { return FromRuns(r.source); });
  if (lead == rows.end()) return absl::OkStatus();
  labels.Fill(*lead);
  if (lead->pooled || lead->runs.size() != 1) return absl::OkStatus();
  auto race = races(lead->runs.front());
  if (!race.ok()) return race.status();
  if (!race->has_value()) return absl::OkStatus();
  for (DffRow& row : rows) labels.Fill(row);
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
      sum ? sum : GemmSetSummer([&timer](std::span<const GemmShape> set) -> absl::StatusOr<SetSum> {
        auto parts = timer(set);
        if (!parts.ok()) return parts.status();
        return SetSumOf(SumTimings(*parts));
      });
  DffRanking out;
  out.candidates = plan.candidates;
  std::vector<DffRow> rows;
  rows.reserve(out.candidates.values.size());
  RowLabels labels;
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
    DffRow& row = rows.emplace_back();
    SetRow(q, d_ff, plan.gemms[i], *total, row);
    if (d_ff == out.candidates.baseline) {
      out.baseline = row;
      CopyLabels(total->labels.get(), out.baseline);
      out.baseline_found = true;
    }
    if (row.source == Source::kMeasured) ++out.measured;
    if (row.source == Source::kReplayed) ++out.replayed;
    if (row.source == Source::kPredicted) ++out.predicted;
    labels.Add(d_ff, std::move(total->labels));
  }
  labels.Sort();
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
  if (auto s = UseRace(races, rows, labels, out); !s.ok()) return s;
  for (const DffRow& r : rows) out.tied_with_best += r.tie_group == 1 ? 1 : 0;
  out.runs = labels.Runs(rows);
  if (q.top > 0) rows = KeepTopOfEachKind(std::move(rows), q.top);
  for (DffRow& row : rows) labels.Fill(row);
  out.rows = std::move(rows);
  if (!out.rows.empty()) out.headline = out.rows.front().source;
  return out;
}

}  // namespace crest::tuner
