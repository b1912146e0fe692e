#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <map>
#include <string>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"

namespace crest {
namespace {

absl::StatusOr<DffRow> TimeMlp(const DffQuery& q, int64_t d_ff, const std::vector<GemmShape>& gemms,
                               const MlpTimer& timer) {
  auto t = timer(gemms);
  if (!t.ok()) return t.status();
  DffRow row;
  row.d_ff = d_ff;
  row.time_us = t->time_us;
  row.time_low_us = t->low_us > 0 ? t->low_us : t->time_us;
  row.time_high_us = t->high_us > 0 ? t->high_us : t->time_us;
  double flops = 0;
  for (const GemmShape& g : gemms) flops += g.Flops();
  row.tflops = flops / row.time_us / 1e6;
  row.mlp_params = MlpParams(q, d_ff);
  row.source = t->source;
  row.provenance = t->provenance;
  row.device = t->device;
  row.software = t->software;
  return row;
}

// Keeps the first `top` rows of each kind (rows sorted by kind, then time).
std::vector<DffRow> KeepTopOfEachKind(std::vector<DffRow> ranked, int top) {
  std::vector<DffRow> kept;
  std::map<Source, int> shown;
  for (DffRow& r : ranked) {
    if (++shown[r.source] <= top) kept.push_back(std::move(r));
  }
  return kept;
}

}  // namespace

int KindOrder(Source source) {
  switch (source) {
    case Source::kMeasured: return 0;
    case Source::kMixed: return 1;
    case Source::kPredicted: return 2;
    case Source::kImported: return 3;
    case Source::kUnknown: return 4;
  }
  return 4;
}

void SetSpeedups(std::span<DffRow> rows, Source kind, double baseline_us) {
  for (DffRow& row : rows) {
    if (row.source == kind && row.time_us > 0) row.speedup_vs_baseline = baseline_us / row.time_us;
  }
}

absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& q, int64_t d_ff) {
  ShapeOptions options;
  options.include_backward = q.train;
  options.fuse_gate_up = q.fuse_gate_up;
  return MlpGemms(q.tokens, q.hidden, d_ff, q.tp, q.dtype, options);
}

int64_t MlpParams(const DffQuery& q, int64_t d_ff) { return 3 * q.hidden * d_ff / q.tp; }

absl::StatusOr<DffPlan> PlanDff(const DffQuery& q) {
  if (q.top < 0) {
    return absl::InvalidArgumentError(StrCat("top must be 0 (all) or more (got ", q.top, ")"));
  }
  auto candidates = GenerateDffCandidates({q.hidden, q.ratio, q.window, q.align, q.tp});
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

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const MlpTimer& timer) {
  auto plan = PlanDff(q);
  if (!plan.ok()) return plan.status();
  return RankDff(q, *plan, timer);
}

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const DffPlan& plan, const MlpTimer& timer) {
  DffRanking out;
  out.candidates = plan.candidates;
  std::vector<DffRow> rows;
  rows.reserve(out.candidates.values.size());
  for (size_t i = 0; i < out.candidates.values.size(); ++i) {
    const int64_t d_ff = out.candidates.values[i];
    auto row = TimeMlp(q, d_ff, plan.gemms[i], timer);
    if (!row.ok()) {
      if (q.skip_missing && absl::IsNotFound(row.status())) {
        ++out.missing;
        continue;
      }
      return row.status();
    }
    if (d_ff == out.candidates.baseline) {
      out.baseline = *row;
      out.baseline_found = true;
    }
    if (row->source == Source::kMeasured) ++out.measured;
    if (row->source == Source::kPredicted) ++out.predicted;
    rows.push_back(*std::move(row));
  }
  out.evaluated = static_cast<int64_t>(rows.size());
  if (!out.baseline_found) out.baseline.d_ff = out.candidates.baseline;
  out.baseline.mlp_params = MlpParams(q, out.candidates.baseline);
  for (DffRow& row : rows) row.params_delta = row.mlp_params - out.baseline.mlp_params;
  if (out.baseline_found) SetSpeedups(rows, out.baseline.source, out.baseline.time_us);
  out.baseline.speedup_vs_baseline = out.baseline_found ? 1.0 : 0;
  // Sort indices, not rows: a row carries its provenance strings. Kinds of
  // number stay apart: measured rows first, each kind ranked by time.
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(KindOrder(rows[a].source), rows[a].time_us) <
           std::pair(KindOrder(rows[b].source), rows[b].time_us);
  });
  std::vector<DffRow> ranked;
  ranked.reserve(order.size());
  for (size_t i : order) ranked.push_back(std::move(rows[i]));
  GroupTiesWithinKind(
      ranked,
      [](const DffRow& r) -> std::optional<TieKey> {
        return TieKey{r.source, r.time_low_us, r.time_high_us};
      },
      &DffRow::tie_group);
  for (const DffRow& r : ranked) out.tied_with_best += r.tie_group == 1 ? 1 : 0;
  if (q.top > 0) ranked = KeepTopOfEachKind(std::move(ranked), q.top);
  out.rows = std::move(ranked);
  return out;
}

absl::StatusOr<Timing> SumGemmTimes(std::span<const GemmShape> gemms, const GemmTimer& timer) {
  Timing sum;
  bool first = true;
  for (const GemmShape& g : gemms) {
    auto t = timer(g);
    if (!t.ok()) return t.status();
    sum.time_us += t->time_us;
    sum.low_us += t->low_us > 0 ? t->low_us : t->time_us;
    sum.high_us += t->high_us > 0 ? t->high_us : t->time_us;
    if (first) {
      first = false;
      sum.source = t->source;
      sum.provenance = t->provenance;
      sum.device = t->device;
      sum.software = t->software;
    } else if (sum.source != t->source) {
      sum.source = Source::kMixed;
    }
  }
  return sum;
}

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const GemmTimer& timer) {
  return RankDff(q, MlpTimer([&timer](std::span<const GemmShape> gemms) {
                   return SumGemmTimes(gemms, timer);
                 }));
}

GemmTimer PredictorTimer(const GpuSpec& gpu) {
  return [&gpu](const GemmShape& g) -> absl::StatusOr<Timing> {
    auto p = Predict(g, gpu);
    if (!p.ok()) return p.status();
    Timing t;
    t.time_us = p->time_us;
    // Candidates within the model's expected error of each other are tied.
    t.low_us = p->time_us * (1 - p->expected_error / 2);
    t.high_us = p->time_us * (1 + p->expected_error / 2);
    t.source = Source::kPredicted;
    t.provenance = std::string(p->model_version);
    return t;
  };
}

}  // namespace crest
