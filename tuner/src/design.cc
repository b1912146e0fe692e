#include "crest/tuner/design.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "crest/tuner/shapes.h"
#include "crest/tuner/timing_ops.h"

namespace crest::tuner {
namespace {

// w·t: the time and its interval scaled, its kind and runs kept.
Timing Scaled(Timing t, double w) {
  t.time_us *= w;
  t.low_us *= w;
  t.high_us *= w;
  return t;
}

// wa·a + wb·b: the kind of number of both (mixed when they differ), the
// runs of both.
Timing Weighted(Timing a, double wa, Timing b, double wb) {
  const Timing parts[] = {Scaled(std::move(a), wa), Scaled(std::move(b), wb)};
  return SumTimings(parts);
}

// Which of a config's GEMMs each figure sums (indices into its GEMM list).
// The attention core's GEMMs (unfused) are in core_* only.
struct ConfigParts {
  std::vector<size_t> layer_fwd, layer_train, logits_fwd, logits_train, core_fwd, core_bwd;
};

ConfigParts Split(const std::vector<GemmShape>& gemms) {
  ConfigParts s;
  for (size_t i = 0; i < gemms.size(); ++i) {
    const GemmShape& g = gemms[i];
    const bool fwd = g.pass == Pass::kFwd;
    if (IsAttentionCore(g)) {
      (fwd ? s.core_fwd : s.core_bwd).push_back(i);
      continue;
    }
    const bool logits = g.name.starts_with("logits.");
    (logits ? s.logits_train : s.layer_train).push_back(i);
    if (fwd) (logits ? s.logits_fwd : s.layer_fwd).push_back(i);
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

Timing Zero() { return PredictedTiming(0, 0, std::string(kStepModelVersion)); }

// One micro-batch's GEMMs and attention core on one rank, timed.
struct Timed {
  Timing gemm_layer_fwd, gemm_layer_train;  // one layer's GEMMs, the attention core's left out
  Timing logits_train;
  Timing attention_fwd, attention_bwd;  // one layer's core
};

// Times every GEMM of the config in one call of `timer` (one run answers
// them all) and its attention core; fills the row's FLOPs and per-layer
// figures.
absl::StatusOr<Timed> TimeParts(const DesignConfig& c, const DesignOptions& o,
                                std::vector<GemmShape> gemms, const GemmSetTimer& timer,
                                DesignRow& row) {
  const bool fused = IsFused(o.attention);
  std::optional<FusedAttention> attention;
  if (fused) {
    auto a = PredictFusedAttention(c.model, *o.gpu, o.attention);
    if (!a.ok()) return a.status();
    attention = *std::move(a);
    std::erase_if(gemms, IsAttentionCore);  // not run: they leave the set and its run
  }
  const ConfigParts s = Split(gemms);
  const double tokens = static_cast<double>(c.model.Tokens());
  const double layers = static_cast<double>(c.layers);
  const double ranks = static_cast<double>(c.model.tp);
  const double core_fwd = fused ? attention->fwd_flops : Flops(gemms, s.core_fwd);
  const double core_bwd = fused ? attention->bwd_flops : Flops(gemms, s.core_bwd);
  const double layer_fwd = Flops(gemms, s.layer_fwd) + core_fwd;
  const double layer_train = Flops(gemms, s.layer_train) + core_fwd + core_bwd;
  row.fwd_flops_per_token = (layers * layer_fwd + Flops(gemms, s.logits_fwd)) * ranks / tokens;
  row.train_flops_per_token =
      (layers * layer_train + Flops(gemms, s.logits_train)) * ranks / tokens;
  const Recompute mode = c.layout.recompute;
  const double again = mode == Recompute::kFull        ? layer_fwd
                       : mode == Recompute::kSelective ? core_fwd
                                                       : 0;
  row.hardware_flops_per_token = row.train_flops_per_token + layers * again * ranks / tokens;
  const ModelConfig& m = c.model;
  row.model_flops_per_token =
      6 * static_cast<double>(row.params.matmul) +
      12 * layers * static_cast<double>(m.heads * m.HeadDim()) * static_cast<double>(m.seq);
  auto parts = timer(gemms);
  if (!parts.ok()) return parts.status();
  // A step runs its GEMMs back to back: predicted ones no faster than the
  // GPU sustains under continuous load (measured ones as measured).
  const GemmCeiling ceiling = ContinuousLoadCeiling(*o.gpu, c.model.dtype);
  for (size_t i = 0; i < parts->size(); ++i) {
    (*parts)[i] = HeldToCeiling(std::move((*parts)[i]), gemms[i].Flops(), ceiling);
  }
  Timed t;
  t.gemm_layer_fwd = Sum(*parts, s.layer_fwd);
  t.gemm_layer_train = Sum(*parts, s.layer_train);
  t.logits_train = Sum(*parts, s.logits_train);
  row.logits_fwd = Sum(*parts, s.logits_fwd);
  row.logits_train = t.logits_train;
  if (fused) {
    t.attention_fwd = attention->fwd;
    t.attention_bwd = attention->bwd;
    row.attention_basis = attention->basis;
  } else {
    t.attention_fwd = Sum(*parts, s.core_fwd);
    t.attention_bwd = Sum(*parts, s.core_bwd);
    row.attention_basis =
        "unfused attention: attn_score and attn_value as batched GEMMs writing the s*s scores";
  }
  row.attention_core_fwd = t.attention_fwd;
  row.layer_fwd = Weighted(t.gemm_layer_fwd, 1, t.attention_fwd, 1);
  const Timing train_parts[] = {t.gemm_layer_train, t.attention_fwd, t.attention_bwd};
  row.layer_train = SumTimings(train_parts);
  return t;
}

// The optimizer step from one micro-batch's parts: fills row.step.
void ComposeStep(const DesignConfig& c, const GpuSpec& gpu, const Timed& t, const TpComm& tp,
                 const DpComm& dp, DesignRow& row) {
  const double layers = static_cast<double>(c.layers);
  const double accum = static_cast<double>(c.layout.grad_accum);
  const KernelTraffic lk = LayerKernelTraffic(c);
  const KernelTraffic hk = HeadKernelTraffic(c);
  const Timing other_fwd = MemoryBoundTiming(lk.fwd_bytes, lk.fwd_kernels, gpu);
  const Timing other_bwd = MemoryBoundTiming(lk.bwd_bytes, lk.bwd_kernels, gpu);
  const Timing head =
      MemoryBoundTiming(hk.fwd_bytes + hk.bwd_bytes, hk.fwd_kernels + hk.bwd_kernels, gpu);
  Timing again = Zero();  // one layer's recompute
  if (c.layout.recompute == Recompute::kSelective) again = t.attention_fwd;
  if (c.layout.recompute == Recompute::kFull) {
    const Timing forward[] = {t.gemm_layer_fwd, t.attention_fwd, other_fwd, tp.layer_fwd};
    again = SumTimings(forward);
  }
  StepBreakdown& s = row.step;
  const double per_step = accum * layers;
  s.micro_batches = c.layout.grad_accum;
  s.gemm = Weighted(t.gemm_layer_train, per_step, t.logits_train, accum);
  s.attention = Weighted(t.attention_fwd, per_step, t.attention_bwd, per_step);
  const Timing other[] = {Scaled(other_fwd, per_step), Scaled(other_bwd, per_step),
                          Scaled(head, accum)};
  s.other = SumTimings(other);
  s.recompute = Scaled(again, per_step);
  s.tp_comm = Scaled(tp.layer_train, per_step);
  s.optimizer = OptimizerTiming(c, row.params, gpu);
  // Each layer's collectives run beside the next layer's compute.
  const double fwd_us = t.gemm_layer_fwd.time_us + t.attention_fwd.time_us + other_fwd.time_us;
  const double bwd_us = t.gemm_layer_train.time_us - t.gemm_layer_fwd.time_us +
                        t.attention_bwd.time_us + other_bwd.time_us + again.time_us;
  const double share = CollectiveShare(gpu);
  // BACKWARD_POST: each layer waits for its gather, queued behind the
  // previous layer's reduce-scatter; nothing of the backward's hides.
  const double bwd_exposed = c.layout.backward_prefetch == BackwardPrefetch::kPost
                                 ? layers * dp.layer_bwd_us
                                 : ExposedComm(dp.layer_bwd_us, bwd_us, c.layers, share);
  const double exposed = static_cast<double>(dp.fwd_micro_batches) *
                             ExposedComm(dp.layer_fwd_us, fwd_us, c.layers, share) +
                         static_cast<double>(dp.bwd_micro_batches) * bwd_exposed + dp.rest_us;
  s.dp_comm = PredictedTiming(exposed, kStepPartError, std::string(kStepModelVersion));
  s.dp_comm_total_us = dp.total_us;
  const Timing all[] = {s.gemm,    s.attention, s.other,  s.recompute,
                        s.tp_comm, s.optimizer, s.dp_comm};
  s.total = SumTimings(all);
  s.no_overlap_us = s.total.time_us - exposed + dp.total_us;
}

// The step's rates: tokens/s per GPU, model FLOP/s, MFU and HFU.
void Rates(const DesignConfig& c, const DesignOptions& o, DesignRow& row) {
  row.step_train = row.step.total;
  row.tokens_per_step_per_gpu = static_cast<double>(c.layout.grad_accum) *
                                static_cast<double>(c.model.Tokens()) /
                                static_cast<double>(c.model.tp);
  row.tokens_per_s_per_gpu = row.tokens_per_step_per_gpu / (row.step.total.time_us * 1e-6);
  row.tokens_per_s_per_gpu_no_overlap =
      row.tokens_per_step_per_gpu / (row.step.no_overlap_us * 1e-6);
  row.model_flops_per_s_per_gpu = row.model_flops_per_token * row.tokens_per_s_per_gpu;
  if (o.peak_tflops > 0) {
    row.mfu_peak = row.model_flops_per_s_per_gpu / (o.peak_tflops * 1e12);
    row.hfu_peak = row.hardware_flops_per_token * row.tokens_per_s_per_gpu / (o.peak_tflops * 1e12);
  }
}

}  // namespace

absl::StatusOr<DesignRow> EvaluateDesign(const DesignConfig& c, const DesignOptions& o,
                                         const GemmSetTimer& timer) {
  if (o.gpu == nullptr) return absl::InvalidArgumentError("design: needs a GPU");
  DesignRow row;
  row.config = c;
  if (c.layers < 1 || c.layers > 100000) {
    row.rule = absl::InvalidArgumentError(
        StrCat("layers must be between 1 and 100000 (got ", c.layers, ")"));
    return row;
  }
  if (auto s = ValidateLayout(c.layout, c.model.tp); !s.ok()) {
    row.rule = s;
    return row;
  }
  ShapeOptions options;
  options.include_backward = true;
  options.fuse_gate_up = o.fuse_gate_up;
  options.mlp = c.mlp;
  auto gemms = TransformerGemms(c.model, options);
  if (!gemms.ok()) {
    row.rule = gemms.status();
    return row;
  }
  row.warnings = HeadDimWarnings(c.model);
  row.params = CountParams(c);
  row.memory = PredictTrainingMemory(c, row.params, *o.gpu, o.attention);
  if (!row.memory.fits) {
    row.rule = absl::ResourceExhaustedError(
        StrCat("memory: ", DescribeMemory(row.memory, *o.gpu),
               "; shard it (--dp N --zero 1|2|3, --tp), recompute (--recompute), or a smaller "
               "--batch"));
    return row;
  }
  auto timed = TimeParts(c, o, *std::move(gemms), timer, row);
  if (!timed.ok()) return timed.status();
  auto tp = PredictTpComm(c.model, *o.gpu);
  if (!tp.ok()) return tp.status();
  row.comm_layer_train = tp->layer_train;
  row.comm_basis = tp->basis;
  auto dp = PredictDpComm(c, row.params, *o.gpu);
  if (!dp.ok()) return dp.status();
  row.dp_basis = dp->basis;
  ComposeStep(c, *o.gpu, *timed, *tp, *dp, row);
  Rates(c, o, row);
  return row;
}

DesignRankBy RankByOf(std::span<const DesignRow> rows) {
  std::optional<int64_t> size;
  for (const DesignRow& r : rows) {
    if (!r.rule.ok()) continue;
    if (size && *size != r.params.total) return DesignRankBy::kModelFlopsPerS;
    size = r.params.total;
  }
  return DesignRankBy::kTokensPerS;
}

std::string_view RankByName(DesignRankBy by) {
  return by == DesignRankBy::kModelFlopsPerS ? "model_flops_per_s_per_gpu" : "tokens_per_s_per_gpu";
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
  const DesignRankBy by = RankByOf(rows);
  RankRows(
      rows,
      [by](const DesignRow& r) -> std::optional<TieKey> {
        if (!r.rule.ok()) return std::nullopt;  // not ranked
        // Time per unit of the figure (per token, or per model FLOP), its
        // interval the step's, scaled alike.
        const Timing& t = r.step_train;
        const double rate = by == DesignRankBy::kModelFlopsPerS ? r.model_flops_per_s_per_gpu
                                                                : r.tokens_per_s_per_gpu;
        const double per_unit = rate > 0 ? 1 / rate : 0;
        const double low = t.time_us > 0 ? LowOf(t) / t.time_us : 1;
        return TieKey{t.source, per_unit, per_unit * low};
      },
      &DesignRow::tie_group, first);
}

int64_t LargestFittingBatch(DesignConfig c, const GpuSpec& gpu, AttentionKernel attention) {
  const DesignParams params = CountParams(c);  // the same at every micro-batch
  const auto fits = [&](int64_t b) {
    c.model.micro_batch = b;
    return PredictTrainingMemory(c, params, gpu, attention).fits;
  };
  if (!fits(1)) return 0;
  if (fits(kMaxBatchSearched)) return kMaxBatchSearched;
  int64_t lo = 1;                  // fits
  int64_t hi = kMaxBatchSearched;  // does not
  while (hi - lo > 1) {            // memory grows with b
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
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
  const auto lo =
      static_cast<int64_t>(std::ceil((s.params * (1 - s.tolerance) - fixed) / per_layer));
  const auto hi =
      static_cast<int64_t>(std::floor((s.params * (1 + s.tolerance) - fixed) / per_layer));
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
  const double vocab = static_cast<double>(RoundUp(s.base.model.vocab, 128 * s.base.model.tp));
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
  const int64_t tp = s.base.model.tp;
  const bool gelu = s.base.mlp == MlpKind::kGelu;
  const std::vector<Ratio> gelu_ratio = {{4, 1, "4"}};
  for (int64_t h = 128; h <= 65536; h += 128) {
    if (!WidthCanFit(h, s)) continue;
    for (const Ratio& ratio : gelu ? gelu_ratio : s.ratios) {
      std::vector<int64_t> dffs = {RoundUp(ratio.FloorTimes(h), 256)};
      if (s.choose_dff && !gelu) {  // the d_ff answer times SwiGLU MLPs
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
            DesignConfig c = s.base;
            c.model.hidden = h;
            c.model.heads = heads;
            c.model.kv_heads = kv;
            c.model.d_ff = d_ff;
            c.model.vocab = RoundUp(s.base.model.vocab, 128 * tp);
            for (int64_t layers : LayerCounts(c, s)) {
              c.layers = layers;
              out.push_back(c);
              if (static_cast<int64_t>(out.size()) > kMaxDesignConfigs) {
                return absl::InvalidArgumentError(StrCat(
                    "params: the search near ", s.params, " parameters finds more than ",
                    kMaxDesignConfigs, " configurations; narrow --tolerance or fix a dimension"));
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace crest::tuner
