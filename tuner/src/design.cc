#include "crest/tuner/design.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "crest/common/str_cat.h"
#include "crest/tuner/shapes.h"

namespace crest {
namespace {

// wa·a + wb·b: the kind of number of both (mixed when they differ), the
// runs of both.
Timing Weighted(Timing a, double wa, Timing b, double wb) {
  for (auto [t, w] : {std::pair{&a, wa}, std::pair{&b, wb}}) {
    t->time_us *= w;
    t->low_us *= w;
    t->high_us *= w;
  }
  const Timing parts[] = {std::move(a), std::move(b)};
  return SumTimings(parts);
}

// Which of a config's GEMMs each figure sums (indices into its GEMM list).
struct GemmSets {
  std::vector<size_t> layer_fwd, layer_train, logits_fwd, logits_train, attention_core_fwd;
};

GemmSets Split(const std::vector<GemmShape>& gemms) {
  GemmSets s;
  for (size_t i = 0; i < gemms.size(); ++i) {
    const GemmShape& g = gemms[i];
    const bool logits = g.name.starts_with("logits.");
    (logits ? s.logits_train : s.layer_train).push_back(i);
    if (g.pass != Pass::kFwd) continue;
    (logits ? s.logits_fwd : s.layer_fwd).push_back(i);
    if (IsAttentionCore(g)) s.attention_core_fwd.push_back(i);
  }
  return s;
}


double Flops(const std::vector<GemmShape>& gemms, const std::vector<size_t>& set) {
  double f = 0;
  for (size_t i : set) f += gemms[i].Flops();
  return f;
}

Timing Sum(const std::vector<Timing>& parts, const std::vector<size_t>& set) {
  std::vector<Timing> chosen;
  chosen.reserve(set.size());
  for (size_t i : set) chosen.push_back(parts[i]);
  return SumTimings(chosen);
}

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The step with tensor parallelism's communication added (t > 1): sets the
// row's step, communication and basis; the step's communication [µs].
absl::StatusOr<double> AddCommunication(const DesignConfig& c, const DesignOptions& o,
                                        const Timing& compute, DesignRow& row) {
  row.step_train = compute;
  if (c.model.tp == 1) {
    row.comm_basis = "no tensor parallelism: no communication";
    return 0.0;
  }
  if (o.gpu == nullptr) return absl::InvalidArgumentError("design: tensor parallelism needs a GPU");
  auto comm = PredictTpComm(c.model, *o.gpu);
  if (!comm.ok()) return comm.status();
  const double layers = static_cast<double>(c.layers);
  row.comm_layer_train = comm->layer_train;
  row.comm_basis = comm->basis;
  row.step_train = Weighted(compute, 1, comm->layer_train, layers);
  return layers * comm->layer_train.time_us;
}

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
                                         const GemmSetTimer& timer) {
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
  const bool fused = o.attention == AttentionKernel::kFused;
  std::optional<FusedAttention> attention;
  if (fused) {
    if (o.gpu == nullptr) return absl::InvalidArgumentError("design: fused attention needs a GPU");
    auto a = PredictFusedAttention(c.model, *o.gpu);
    if (!a.ok()) return a.status();
    attention = *std::move(a);
    // Its GEMMs are not run: they leave the set (and the run that answers it).
    std::erase_if(*gemms, IsAttentionCore);
  }
  const GemmSets s = Split(*gemms);
  const double tokens = static_cast<double>(c.model.Tokens());
  const double layers = static_cast<double>(c.layers);
  const double ranks = static_cast<double>(c.model.tp);
  const double core_fwd = attention ? attention->fwd_flops : 0;
  const double core_train = attention ? attention->fwd_flops + attention->bwd_flops : 0;
  row.fwd_flops_per_token =
      (layers * (Flops(*gemms, s.layer_fwd) + core_fwd) + Flops(*gemms, s.logits_fwd)) * ranks /
      tokens;
  row.train_flops_per_token =
      (layers * (Flops(*gemms, s.layer_train) + core_train) + Flops(*gemms, s.logits_train)) *
      ranks / tokens;
  // Every GEMM of the config in one call: one run answers them all.
  auto parts = timer(*gemms);
  if (!parts.ok()) return parts.status();
  row.layer_fwd = Sum(*parts, s.layer_fwd);
  row.layer_train = Sum(*parts, s.layer_train);
  row.logits_fwd = Sum(*parts, s.logits_fwd);
  row.logits_train = Sum(*parts, s.logits_train);
  if (attention) {
    row.attention_core_fwd = attention->fwd;
    row.attention_basis = attention->basis;
    row.layer_fwd = Weighted(row.layer_fwd, 1, attention->fwd, 1);
    const Timing train_parts[] = {row.layer_train, attention->fwd, attention->bwd};
    row.layer_train = SumTimings(train_parts);
  } else {
    row.attention_core_fwd = Sum(*parts, s.attention_core_fwd);
    row.attention_basis =
        "unfused attention: attn_score and attn_value as batched GEMMs writing the s*s scores";
  }
  const Timing compute = Weighted(row.layer_train, layers, row.logits_train, 1);
  auto comm_us = AddCommunication(c, o, compute, row);
  if (!comm_us.ok()) return comm_us.status();
  row.layer_train_amortized_us = row.layer_train.time_us + row.logits_train.time_us / layers;
  const double step_s = row.step_train.time_us * 1e-6;
  row.tokens_per_s_per_gpu = tokens / step_s / ranks;
  row.tokens_per_s_per_gpu_overlapped =
      tokens / (std::max(compute.time_us, *comm_us) * 1e-6) / ranks;
  const double flops_per_s_per_gpu = row.train_flops_per_token * row.tokens_per_s_per_gpu;
  if (o.sustained_tflops > 0) row.mfu_sustained = flops_per_s_per_gpu / (o.sustained_tflops * 1e12);
  if (o.peak_tflops > 0) row.mfu_peak = flops_per_s_per_gpu / (o.peak_tflops * 1e12);
  return row;
}

void RankDesigns(std::vector<DesignRow>& rows) {
  // No baseline: the headline is the best of the first kind there is
  // (measured, mixed, predicted).
  Source first = Source::kUnknown;
  for (const DesignRow& r : rows) {
    if (r.rule.ok() && KindOrder(r.step_train.source) < KindOrder(first)) {
      first = r.step_train.source;
    }
  }
  // Ranked by tokens/s per GPU, fastest first.
  RankRows(
      rows,
      [](const DesignRow& r) -> std::optional<TieKey> {
        if (!r.rule.ok()) return std::nullopt;  // not ranked
        // Time per token per GPU (the inverse of tokens/s per GPU), its
        // interval the step's, scaled alike.
        const Timing& t = r.step_train;
        const double per_token = r.tokens_per_s_per_gpu > 0 ? 1 / r.tokens_per_s_per_gpu : 0;
        const double low = t.time_us > 0 ? LowOf(t) / t.time_us : 1;
        return TieKey{t.source, per_token, per_token * low};
      },
      &DesignRow::tie_group, first);
}

namespace {

// Every layer count that lands `c` (its layers ignored) within the budget,
// with 64 ≤ h/layers ≤ 192.
std::vector<int64_t> LayerCounts(DesignConfig c, const DesignSearch& s) {
  c.layers = 1;
  const DesignParams one = CountParams(c);
  const double fixed = static_cast<double>(one.total - one.per_layer);
  const double per_layer = static_cast<double>(one.per_layer);
  const int64_t h = c.model.hidden;
  std::vector<int64_t> out;
  const auto lo = static_cast<int64_t>(
      std::ceil((s.params * (1 - s.tolerance) - fixed) / per_layer));
  const auto hi = static_cast<int64_t>(
      std::floor((s.params * (1 + s.tolerance) - fixed) / per_layer));
  for (int64_t layers = std::max<int64_t>(1, lo); layers <= hi; ++layers) {
    if (h >= 64 * layers && h <= 192 * layers) out.push_back(layers);
  }
  return out;
}

// Whether any layer count could land a width within the budget (a cheap
// bound, never tighter than the truth): a layer holds between 8h² (GQA
// attention, the MLP at ratio 2) and 17h² (full attention, ratio 4, norms),
// there are h/192 to h/64 layers, and the embeddings add at most 2·h·v.
bool WidthCanFit(int64_t h, const DesignSearch& s) {
  const double hh = static_cast<double>(h);
  const double vocab = static_cast<double>(RoundUp(s.base.vocab, 128 * s.base.tp));
  const double most = (hh / 64 + 1) * 17 * hh * hh + 2 * hh * vocab + hh;
  const double least = (hh / 192) * 8 * hh * hh;
  return least <= s.params * (1 + s.tolerance) && most >= s.params * (1 - s.tolerance);
}

}  // namespace

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
    if (!WidthCanFit(h, s)) continue;
    for (const Ratio& ratio : s.ratios) {
      std::vector<int64_t> dffs = {RoundUp(ratio.FloorTimes(h), 256)};
      if (s.choose_dff) {
        auto chosen = s.choose_dff(h, ratio);
        if (!chosen.ok()) return chosen.status();
        dffs = *std::move(chosen);
      }
      for (int64_t d_ff : dffs) {
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
            c.model.d_ff = d_ff;
            c.model.vocab = RoundUp(s.base.vocab, 128 * tp);
            for (int64_t layers : LayerCounts(c, s)) {
              c.layers = layers;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace crest
