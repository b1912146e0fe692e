#include "crest/tuner/training_memory.h"

#include "crest/common/str_cat.h"
#include "step_elements.h"

namespace crest::tuner {

double LayerActivationBytes(const DesignConfig& c, AttentionKernel attention, Recompute mode) {
  const ModelConfig& m = c.model;
  const internal::StepElements n = internal::CountElements(c);
  const double e = n.bytes;
  const double tokens = n.tokens;
  const double hidden = n.hidden;  // sequence parallel
  const double d = n.head_dim;
  const double heads = n.heads;
  const double kv = n.kv_heads;
  const double ff = n.ff;
  if (mode == Recompute::kFull) return e * hidden;  // the layer's input
  double bytes = 0;
  bytes += 2 * e * hidden;                                // norm 1's input, the qkv GEMM's input
  bytes += e * tokens * (heads + 2 * kv) * d;             // q, k, v
  bytes += e * tokens * heads * d;                        // the attention output (attn_out's input)
  bytes += 2 * e * hidden;                                // norm 2's input, the MLP's input
  bytes += (c.mlp == MlpKind::kSwiGlu ? 3 : 2) * e * ff;  // gate and up (or fc1) out, down's in
  if (c.dropout) bytes += 2 * hidden;                     // two one-byte masks
  if (mode == Recompute::kSelective) return bytes;        // the core re-runs: none of its own kept
  if (IsFused(attention)) {
    bytes += 4 * tokens * heads;  // fp32 log-sum-exp per row and head
  } else {
    const double scores = static_cast<double>(m.micro_batch) * heads * static_cast<double>(m.seq) *
                          static_cast<double>(m.seq);
    bytes += e * scores;                       // softmax output
    if (c.dropout) bytes += (1 + e) * scores;  // its mask and dropped output
  }
  return bytes;
}

TrainingMemory PredictTrainingMemory(const DesignConfig& c, const DesignParams& p,
                                     const GpuSpec& gpu, AttentionKernel attention) {
  const TrainingLayout& l = c.layout;
  const double params = static_cast<double>(p.per_rank);
  const double dp = static_cast<double>(l.dp);
  TrainingMemory mem;
  mem.weights = 2 * params / (l.zero >= 3 ? dp : 1);
  if (l.zero >= 3 && l.dp > 1) {
    mem.weights += 2 * 2 * static_cast<double>(p.per_layer) / static_cast<double>(c.model.tp);
  }
  mem.gradients = 2 * params / (l.zero >= 2 ? dp : 1);
  mem.optimizer = 12 * params / (l.zero >= 1 ? dp : 1);
  const double layers = static_cast<double>(c.layers);
  const internal::StepElements n = internal::CountElements(c);
  mem.activations = layers * LayerActivationBytes(c, attention, l.recompute) +
                    n.bytes * n.hidden;  // the final norm's input
  if (l.recompute == Recompute::kFull) {
    mem.activations += LayerActivationBytes(c, attention, Recompute::kNone);  // the one re-run
  }
  mem.logits = (n.bytes + 4) * n.logits;
  const double held = mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.logits;
  mem.reserve = kContextReserveGiB * kGiB + kFragmentation * held;
  mem.total = held + mem.reserve;
  mem.capacity = gpu.memory_gib * kGiB;
  mem.fits = mem.total <= mem.capacity;
  return mem;
}

std::string DescribeMemory(const TrainingMemory& m, const GpuSpec& gpu) {
  const auto gib = [](double bytes) { return Decimals(Gib(bytes), 1); };
  return StrCat("needs ", gib(m.total), " GiB of ", gpu.name, "'s ", gib(m.capacity),
                " GiB per GPU (weights ", gib(m.weights), ", gradients ", gib(m.gradients),
                ", optimizer ", gib(m.optimizer), ", activations ", gib(m.activations), ", logits ",
                gib(m.logits), ", reserve ", gib(m.reserve), ")");
}

}  // namespace crest::tuner
