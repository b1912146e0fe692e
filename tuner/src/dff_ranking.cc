#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"

namespace crest::tuner {
namespace {

// A candidate as the ranking orders it: its row's figures and kind, without
// the row's labels and race fields. A row is 456 bytes: a window's rows
// (117 KB for the default window) were built and then ranked into a second
// vector on every answer, and in crestd, whose allocator gives freed memory
// back (four arenas, a fixed mmap threshold, a trim every 10 s), their pages
// were faulted in again on every call (19-27 page faults an uncached
// QueryDff; 1.5 with candidates). Rows are made for the candidates an answer
// keeps (every one when a race orders them).
struct Candidate {
  int64_t d_ff = 0;
  double time_us = 0;
  double time_low_us = 0;
  double time_high_us = 0;
  double tflops = 0;
  double speedup_vs_baseline = 0;
  Source speedup_basis = Source::kUnknown;
  int64_t mlp_params = 0;
  int64_t params_delta = 0;
  Source source = Source::kPredicted;
  bool pooled = false;
  int tie_group = 0;
};

Candidate CandidateOf(const DffQuery& q, int64_t d_ff, std::span<const GemmShape> gemms,
                      const SetSum& sum) {
  Candidate c;
  c.d_ff = d_ff;
  c.time_us = sum.time_us;
  c.time_low_us = LowOf(sum);
  c.time_high_us = HighOf(sum);
  double flops = 0;
  for (const GemmShape& g : gemms) flops += g.Flops();
  c.tflops = flops / c.time_us / 1e6;
  c.mlp_params = MlpParams(q, d_ff);
  c.source = sum.source;
  c.pooled = sum.pooled;
  return c;
}

// The candidate's row, with `labels` (none: null).
DffRow RowOf(const Candidate& c, const TimingLabels* labels) {
  DffRow row;
  row.d_ff = c.d_ff;
  row.time_us = c.time_us;
  row.time_low_us = c.time_low_us;
  row.time_high_us = c.time_high_us;
  row.tie_group = c.tie_group;
  row.tflops = c.tflops;
  row.speedup_vs_baseline = c.speedup_vs_baseline;
  row.speedup_basis = c.speedup_basis;
  row.mlp_params = c.mlp_params;
  row.params_delta = c.params_delta;
  row.source = c.source;
  row.pooled = c.pooled;
  if (labels != nullptr) CopyLabels(*labels, row);
  return row;
}

// The candidates' labels, by d_ff (a plan's values are unique), shared:
// most candidates share one run's.
class CandidateLabels {
 public:
  void Add(int64_t d_ff, std::shared_ptr<const TimingLabels> labels) {
    entries_.emplace_back(d_ff, std::move(labels));
  }
  // Call after the last Add, before Of and Runs.
  void Sort() {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.first < b.first; });
  }
  // The labels of candidate `d_ff`; null: none.
  const TimingLabels* Of(int64_t d_ff) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), d_ff,
                               [](const Entry& e, int64_t v) { return e.first < v; });
    return it == entries_.end() || it->first != d_ff ? nullptr : it->second.get();
  }
  // The runs `rows` (candidates or rows) come from, each once, in order of
  // first appearance.
  template <typename Row>
  std::vector<RunInfo> Runs(const std::vector<Row>& rows) const {
    std::vector<RunInfo> runs;
    std::unordered_set<const TimingLabels*> merged;
    const TimingLabels* last = nullptr;  // rows in a row mostly share labels
    for (const Row& row : rows) {
      const TimingLabels* labels = Of(row.d_ff);
      if (labels == last) continue;
      last = labels;
      if (labels != nullptr && !labels->runs.empty() && merged.insert(labels).second) {
        MergeRuns(runs, labels->runs);
      }
    }
    return runs;
  }

 private:
  using Entry = std::pair<int64_t, std::shared_ptr<const TimingLabels>>;
  std::vector<Entry> entries_;
};

// Keeps the first `top` rows (or candidates) of each kind (rows ranked).
template <typename Row>
std::vector<Row> KeepTopOfEachKind(std::vector<Row> ranked, int top) {
  std::vector<Row> kept;
  std::map<Source, int> shown;
  for (Row& r : ranked) {
    if (++shown[r.source] <= top) kept.push_back(std::move(r));
  }
  return kept;
}

// Each candidate's speed-up: against the baseline's time where the baseline
// was answered in the candidate's kind, else against the predicted baseline.
void SetSpeedups(const DffRanking& out, std::vector<Candidate>& candidates) {
  for (Candidate& c : candidates) {
    double base = 0;
    if (out.baseline_found && out.baseline.source == c.source) {
      base = out.baseline.time_us;
      c.speedup_basis = c.source;
    } else if (out.predicted_baseline_us > 0) {
      base = out.predicted_baseline_us;
      c.speedup_basis = Source::kPredicted;
    } else if (out.baseline_found && out.baseline.source == Source::kPredicted) {
      base = out.baseline.time_us;
      c.speedup_basis = Source::kPredicted;
    }
    if (base > 0 && c.time_us > 0) c.speedup_vs_baseline = base / c.time_us;
  }
}

// The race of the measured headline's run (the first measured or replayed
// candidate's, when it is one run's), if `races` finds one.
absl::StatusOr<std::optional<DffRace>> RaceOf(const DffRaceFinder& races,
                                              const std::vector<Candidate>& ranked,
                                              const CandidateLabels& labels) {
  if (!races) return std::optional<DffRace>();
  const auto lead = std::find_if(ranked.begin(), ranked.end(),
                                 [](const Candidate& c) { return FromRuns(c.source); });
  if (lead == ranked.end() || lead->pooled) return std::optional<DffRace>();
  const TimingLabels* lead_labels = labels.Of(lead->d_ff);
  if (lead_labels == nullptr || lead_labels->runs.size() != 1) return std::optional<DffRace>();
  return races(lead_labels->runs.front());
}

// The rows of `candidates`, in their order.
std::vector<DffRow> RowsFor(const std::vector<Candidate>& candidates,
                            const CandidateLabels& labels) {
  std::vector<DffRow> rows;
  rows.reserve(candidates.size());
  for (const Candidate& c : candidates) rows.push_back(RowOf(c, labels.Of(c.d_ff)));
  return rows;
}

// Counts the rows (or candidates) tied with the best and names the runs they
// come from, then keeps the query's top of each kind.
template <typename Row>
std::vector<Row> Finish(const DffQuery& q, std::vector<Row> ranked, const CandidateLabels& labels,
                        DffRanking& out) {
  for (const Row& r : ranked) out.tied_with_best += r.tie_group == 1 ? 1 : 0;
  out.runs = labels.Runs(ranked);
  if (q.top > 0) ranked = KeepTopOfEachKind(std::move(ranked), q.top);
  return ranked;
}

// The answer's rows from the ranked candidates: a race found orders every
// row (it reads their runs), else only the kept candidates' rows are made.
absl::StatusOr<std::vector<DffRow>> RowsOf(const DffQuery& q, const DffRaceFinder& races,
                                           std::vector<Candidate> ranked,
                                           const CandidateLabels& labels, DffRanking& out) {
  auto race = RaceOf(races, ranked, labels);
  if (!race.ok()) return race.status();
  if (!race->has_value()) return RowsFor(Finish(q, std::move(ranked), labels, out), labels);
  std::vector<DffRow> rows = RowsFor(ranked, labels);
  out.race_note = ApplyRace(**race, rows);
  if (out.race_note.empty()) out.race = (*race)->info;
  return Finish(q, std::move(rows), labels, out);
}

}  // namespace

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
  std::vector<Candidate> ranked;
  ranked.reserve(out.candidates.values.size());
  CandidateLabels labels;
  std::optional<std::span<const GemmShape>> baseline_gemms;
  for (size_t i = 0; i < out.candidates.values.size(); ++i) {
    const int64_t d_ff = out.candidates.values[i];
    if (d_ff == out.candidates.baseline) baseline_gemms = plan.gemms[i];
    auto total = summed(plan.gemms[i]);
    if (!total.ok()) {
      if (q.skip_missing && absl::IsNotFound(total.status())) {
        ++out.missing;
        continue;
      }
      return total.status();
    }
    const Candidate& c = ranked.emplace_back(CandidateOf(q, d_ff, plan.gemms[i], *total));
    if (d_ff == out.candidates.baseline) {
      out.baseline = RowOf(c, total->labels.get());
      out.baseline_found = true;
    }
    if (c.source == Source::kMeasured) ++out.measured;
    if (c.source == Source::kReplayed) ++out.replayed;
    if (c.source == Source::kPredicted) ++out.predicted;
    labels.Add(d_ff, std::move(total->labels));
  }
  labels.Sort();
  out.evaluated = static_cast<int64_t>(ranked.size());
  if (!out.baseline_found) out.baseline.d_ff = out.candidates.baseline;
  out.baseline.mlp_params = MlpParams(q, out.candidates.baseline);
  for (Candidate& c : ranked) c.params_delta = c.mlp_params - out.baseline.mlp_params;
  const bool other_kinds = std::any_of(ranked.begin(), ranked.end(), [&](const Candidate& c) {
    return !out.baseline_found || c.source != out.baseline.source;
  });
  if (predict && baseline_gemms && other_kinds &&
      !(out.baseline_found && out.baseline.source == Source::kPredicted)) {
    auto parts = predict(*baseline_gemms);
    if (parts.ok()) out.predicted_baseline_us = SumTimings(*parts).time_us;
  }
  SetSpeedups(out, ranked);
  out.baseline.speedup_vs_baseline = out.baseline_found ? 1.0 : 0;
  out.baseline.speedup_basis = out.baseline_found ? out.baseline.source : Source::kUnknown;
  std::vector<std::pair<Source, double>> speedups;
  speedups.reserve(ranked.size());
  for (const Candidate& c : ranked) speedups.emplace_back(c.source, c.speedup_vs_baseline);
  out.headline = HeadlineKind(speedups);
  RankRows(
      ranked,
      [](const Candidate& c) -> std::optional<TieKey> {
        return TieKey{c.source, c.time_us, c.time_low_us};
      },
      &Candidate::tie_group, out.headline);
  auto rows = RowsOf(q, races, std::move(ranked), labels, out);
  if (!rows.ok()) return rows.status();
  out.rows = *std::move(rows);
  if (!out.rows.empty()) out.headline = out.rows.front().source;
  return out;
}

}  // namespace crest::tuner
