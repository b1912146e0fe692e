#include "crest/tuner/design.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "crest/common/str_cat.h"
#include "crest/tuner/shapes.h"

namespace crest {
namespace {

// wa·a + wb·b, with the kind of number of both (mixed when they differ).
Timing Weighted(const Timing& a, double wa, const Timing& b, double wb) {
  Timing t = a;
  t.time_us = wa * a.time_us + wb * b.time_us;
  t.low_us = wa * a.low_us + wb * b.low_us;
  t.high_us = wa * a.high_us + wb * b.high_us;
  if (a.source != b.source) t.source = Source::kMixed;
  return t;
}

struct GemmSets {
  std::vector<GemmShape> layer_fwd, layer_train, logits_fwd, logits_train, attention_core_fwd;
};

GemmSets Split(const std::vector<GemmShape>& gemms) {
  GemmSets s;
  for (const GemmShape& g : gemms) {
    const bool logits = g.name.starts_with("logits.");
    (logits ? s.logits_train : s.layer_train).push_back(g);
    if (g.pass != Pass::kFwd) continue;
    (logits ? s.logits_fwd : s.layer_fwd).push_back(g);
    if (g.name.starts_with("attn_score.") || g.name.starts_with("attn_value.")) {
      s.attention_core_fwd.push_back(g);
    }
  }
  return s;
}

double Flops(const std::vector<GemmShape>& gemms) {
  double f = 0;
  for (const GemmShape& g : gemms) f += g.Flops();
  return f;
}

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

DesignParams CountParams(const DesignConfig& c) {
  const ModelConfig& m = c.model;
  const int64_t h = m.hidden;
  const int64_t d = m.HeadDim();
  const int64_t attention = h * (m.heads + 2 * m.KvHeads()) * d + m.heads * d * h;
  const int64_t mlp = 3 * h * m.d_ff;
  DesignParams p;
  p.per_layer = attention + mlp + 2 * h;
  p.embedding = m.vocab * h * (c.tied_embeddings ? 1 : 2);
  p.total = c.layers * p.per_layer + p.embedding + h;
  p.per_rank = c.layers * ((attention + mlp) / m.tp + 2 * h) + p.embedding / m.tp + h;
  return p;
}

std::vector<std::string> HeadDimWarnings(const ModelConfig& c) {
  std::vector<std::string> out;
  const int64_t d = c.HeadDim();
  if (d % 8 != 0) {
    out.push_back(StrCat("head dim ", d, " is not a multiple of 8: tensor cores want multiples "
                         "of 8 and fused attention kernels (FlashAttention) require it"));
  }
  if (d > 256) {
    out.push_back(StrCat("head dim ", d, " is above 256: fused attention kernels "
                         "(FlashAttention 2 and 3) stop at 256, so attention would run unfused"));
  }
  if (d < 32) {
    out.push_back(StrCat("head dim ", d, " is below 32: attention's GEMMs have K = ", d,
                         " and leave tensor cores mostly idle"));
  }
  return out;
}

absl::StatusOr<DesignRow> EvaluateDesign(const DesignConfig& c, const DesignOptions& o,
                                         const GemmTimer& timer) {
  DesignRow row;
  row.config = c;
  if (c.layers < 1 || c.layers > 100000) {
    row.rule = absl::InvalidArgumentError(
        StrCat("layers must be between 1 and 100000 (got ", c.layers, ")"));
    return row;
  }
  ShapeOptions options;
  options.include_backward = true;
  options.fuse_gate_up = o.fuse_gate_up;
  auto gemms = TransformerGemms(c.model, options);
  if (!gemms.ok()) {
    row.rule = gemms.status();
    return row;
  }
  row.warnings = HeadDimWarnings(c.model);
  row.params = CountParams(c);
  const GemmSets s = Split(*gemms);
  const double tokens = static_cast<double>(c.model.Tokens());
  const double layers = static_cast<double>(c.layers);
  const double ranks = static_cast<double>(c.model.tp);
  row.fwd_flops_per_token =
      (layers * Flops(s.layer_fwd) + Flops(s.logits_fwd)) * ranks / tokens;
  row.train_flops_per_token =
      (layers * Flops(s.layer_train) + Flops(s.logits_train)) * ranks / tokens;
  for (auto [set, out] : {std::pair{&s.layer_fwd, &row.layer_fwd},
                          std::pair{&s.layer_train, &row.layer_train},
                          std::pair{&s.logits_fwd, &row.logits_fwd},
                          std::pair{&s.attention_core_fwd, &row.attention_core_fwd},
                          std::pair{&s.logits_train, &row.logits_train}}) {
    auto t = SumGemmTimes(*set, timer);
    if (!t.ok()) return t.status();
    *out = *std::move(t);
  }
  row.step_train = Weighted(row.layer_train, layers, row.logits_train, 1);
  row.layer_train_amortized_us = row.layer_train.time_us + row.logits_train.time_us / layers;
  const double step_s = row.step_train.time_us * 1e-6;
  row.tokens_per_s_per_gpu = tokens / step_s / ranks;
  const double flops_per_s_per_gpu = row.train_flops_per_token * row.tokens_per_s_per_gpu;
  if (o.sustained_tflops > 0) row.mfu_sustained = flops_per_s_per_gpu / (o.sustained_tflops * 1e12);
  if (o.peak_tflops > 0) row.mfu_peak = flops_per_s_per_gpu / (o.peak_tflops * 1e12);
  return row;
}

void RankDesigns(std::vector<DesignRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const DesignRow& a, const DesignRow& b) {
    const auto key = [](const DesignRow& r) {
      return std::tuple(!r.rule.ok(), r.rule.ok() ? KindOrder(r.step_train.source) : 0,
                        r.rule.ok() ? -r.tokens_per_s_per_gpu : 0.0);
    };
    return key(a) < key(b);
  });
  GroupTiesWithinKind(
      rows,
      [](const DesignRow& r) -> std::optional<TieKey> {
        if (!r.rule.ok()) return std::nullopt;  // not ranked
        return TieKey{r.step_train.source, r.step_train.low_us, r.step_train.high_us};
      },
      &DesignRow::tie_group);
}

absl::StatusOr<std::vector<DesignConfig>> SearchDesigns(const DesignSearch& s) {
  if (!(s.params >= 1e6 && s.params <= 1e13)) {
    return absl::InvalidArgumentError(
        StrCat("params must be between 1e6 and 1e13 (got ", s.params, ")"));
  }
  if (!(s.tolerance > 0 && s.tolerance <= 0.5)) {
    return absl::InvalidArgumentError(
        StrCat("tolerance must be above 0% and at most 50% (got ", 100 * s.tolerance, "%)"));
  }
  std::vector<DesignConfig> out;
  const int64_t tp = s.base.tp;
  for (int64_t h = 128; h <= 65536; h += 128) {
    for (int64_t d : {64, 128, 256}) {
      if (h % d != 0) continue;
      const int64_t heads = h / d;
      for (int64_t kv : {heads, int64_t{8}}) {
        if (kv > heads || heads % kv != 0 || heads % tp != 0 || kv % tp != 0) continue;
        if (kv == 8 && heads == 8) continue;  // the same as kv = heads
        DesignConfig c;
        c.tied_embeddings = s.tied_embeddings;
        c.model = s.base;
        c.model.hidden = h;
        c.model.heads = heads;
        c.model.kv_heads = kv;
        c.model.d_ff = RoundUp(h * 8 / 3, 256);
        c.model.vocab = RoundUp(s.base.vocab, 128 * tp);
        c.layers = 1;
        const DesignParams one = CountParams(c);
        const double fixed = static_cast<double>(one.total - one.per_layer);
        const auto layers = static_cast<int64_t>(
            std::llround((s.params - fixed) / static_cast<double>(one.per_layer)));
        if (layers < 1 || h < 64 * layers || h > 192 * layers) continue;
        c.layers = layers;
        const double total = static_cast<double>(CountParams(c).total);
        if (std::abs(total - s.params) > s.tolerance * s.params) continue;
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace crest
