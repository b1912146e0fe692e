#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <string>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/shapes.h"

namespace crest {
namespace {

// Times the whole MLP for one d_ff: the sum of its GEMMs. A row mixes
// sources only when the timer does; it then says "mixed", never hides it.
absl::StatusOr<DffRow> TimeMlp(const DffQuery& q, int64_t d_ff, const GemmTimer& timer) {
  ShapeOptions options;
  options.include_backward = q.train;
  options.fuse_gate_up = q.fuse_gate_up;
  auto gemms = MlpGemms(q.tokens, q.hidden, d_ff, q.tp, q.dtype, options);
  if (!gemms.ok()) return gemms.status();
  DffRow row;
  row.d_ff = d_ff;
  double flops = 0;
  for (const GemmShape& g : *gemms) {
    auto t = timer(g);
    if (!t.ok()) return t.status();
    row.time_us += t->time_us;
    flops += g.Flops();
    if (row.source.empty()) {
      row.source = t->source;
      row.provenance = t->provenance;
    } else if (row.source != t->source) {
      row.source = "mixed";
    }
  }
  row.tflops = flops / row.time_us / 1e6;
  row.mlp_params = 3 * q.hidden * d_ff / q.tp;
  return row;
}

}  // namespace

absl::StatusOr<DffRanking> RankDff(const DffQuery& q, const GemmTimer& timer) {
  if (q.top < 0) {
    return absl::InvalidArgumentError(StrCat("top must be 0 (all) or more (got ", q.top, ")"));
  }
  DffRanking out;
  auto candidates = GenerateDffCandidates({q.hidden, q.ratio, q.window, q.align, q.tp});
  if (!candidates.ok()) return candidates.status();
  out.candidates = *std::move(candidates);

  std::vector<DffRow> rows;
  rows.reserve(out.candidates.values.size());
  for (int64_t d_ff : out.candidates.values) {
    auto row = TimeMlp(q, d_ff, timer);
    if (!row.ok()) return row.status();
    if (d_ff == out.candidates.baseline) out.baseline = *row;
    rows.push_back(*std::move(row));
  }
  out.evaluated = static_cast<int64_t>(rows.size());
  for (DffRow& row : rows) {
    row.speedup_vs_baseline = out.baseline.time_us / row.time_us;
    row.params_delta = row.mlp_params - out.baseline.mlp_params;
  }
  out.baseline.speedup_vs_baseline = 1.0;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const DffRow& a, const DffRow& b) { return a.time_us < b.time_us; });
  if (q.top > 0 && rows.size() > static_cast<size_t>(q.top))
    rows.resize(static_cast<size_t>(q.top));
  out.rows = std::move(rows);
  return out;
}

GemmTimer PredictorTimer(const GpuSpec& gpu) {
  return [&gpu](const GemmShape& g) -> absl::StatusOr<Timing> {
    auto p = Predict(g, gpu);
    if (!p.ok()) return p.status();
    return Timing{p->time_us, "predicted", std::string(p->model_version)};
  };
}

}  // namespace crest
