#include "crest/tuner/design_config.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "crest/common/name_table.h"
#include "crest/common/str_cat.h"

namespace crest::tuner {
namespace {

constexpr std::array<std::pair<MlpKind, std::string_view>, 2> kMlps = {
    {{MlpKind::kSwiGlu, "swiglu"}, {MlpKind::kGelu, "gelu"}}};
constexpr std::array<std::pair<NormKind, std::string_view>, 2> kNorms = {
    {{NormKind::kRmsNorm, "rmsnorm"}, {NormKind::kLayerNorm, "layernorm"}}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecomputes = {
    {{Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}}};
constexpr std::array<std::pair<BackwardPrefetch, std::string_view>, 2> kBackwardPrefetches = {
    {{BackwardPrefetch::kPre, "pre"}, {BackwardPrefetch::kPost, "post"}}};

// Whole numbers as integers (1048576, not 1.04858e+06).
std::string Num(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return StrCat(v);
}

absl::Status Range(const char* field, double value, double low, double high) {
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(field, " must be between ", Num(low), " and ", Num(high), " (got ", Num(value), ")"));
}

}  // namespace

std::string_view MlpName(MlpKind mlp) { return NameOf(kMlps, mlp); }
std::string_view NormName(NormKind norm) { return NameOf(kNorms, norm); }
std::string_view RecomputeName(Recompute mode) { return NameOf(kRecomputes, mode); }
std::optional<MlpKind> ParseMlp(std::string_view text) { return ValueNamed(kMlps, text); }
std::optional<NormKind> ParseNorm(std::string_view text) { return ValueNamed(kNorms, text); }
std::optional<Recompute> ParseRecompute(std::string_view text) {
  return ValueNamed(kRecomputes, text);
}
std::string_view BackwardPrefetchName(BackwardPrefetch p) { return NameOf(kBackwardPrefetches, p); }
std::optional<BackwardPrefetch> ParseBackwardPrefetch(std::string_view text) {
  return ValueNamed(kBackwardPrefetches, text);
}

DesignParams CountParams(const DesignConfig& c) {
  const ModelConfig& m = c.model;
  const int64_t h = m.hidden;
  const int64_t d = m.HeadDim();
  const int64_t attention = h * (m.heads + 2 * m.KvHeads()) * d + m.heads * d * h;
  const int64_t mlp = (c.mlp == MlpKind::kGelu ? 2 : 3) * h * m.d_ff;
  const int64_t norm = c.norm == NormKind::kLayerNorm ? 2 * h : h;  // gain (and bias)
  DesignParams p;
  p.per_layer = attention + mlp + 2 * norm;
  p.embedding = m.vocab * h * (c.tied_embeddings ? 1 : 2);
  p.total = c.layers * p.per_layer + p.embedding + norm;
  p.per_rank = c.layers * ((attention + mlp) / m.tp + 2 * norm) + p.embedding / m.tp + norm;
  p.matmul = c.layers * (attention + mlp) + m.vocab * h;
  return p;
}

std::string_view GradReduceName(int bytes) { return bytes == 2 ? "bf16" : "fp32"; }

std::optional<int> ParseGradReduce(std::string_view text) {
  if (text == "fp32") return 4;
  if (text == "bf16") return 2;
  return std::nullopt;
}

absl::Status ValidateLayout(const TrainingLayout& l, int64_t tp) {
  if (l.backward_prefetch == BackwardPrefetch::kPost && l.zero != 3) {
    return absl::InvalidArgumentError(StrCat(
        "backward-prefetch: post is FSDP's backward prefetch, for weights sharded (--zero 3; "
        "got --zero ",
        l.zero, ")"));
  }
  if (l.grad_reduce_bytes != 2 && l.grad_reduce_bytes != 4) {
    return absl::InvalidArgumentError(
        StrCat("grad-reduce: gradients are reduced in fp32 or "
               "bf16 (got ",
               l.grad_reduce_bytes, " bytes)"));
  }
  const absl::Status checks[] = {
      Range("dp", static_cast<double>(l.dp), 1, 1048576),
      Range("zero", l.zero, 0, 3),
      Range("grad-accum", static_cast<double>(l.grad_accum), 1, 65536),
      Range("gpus-per-node", static_cast<double>(l.gpus_per_node), 1, 1024),
      Range("inter-node-gbs", l.inter_node_gbs, 0, 100000),
  };
  for (const absl::Status& status : checks) {
    if (!status.ok()) return status;
  }
  // tp ≤ 1024 (limits.h) and dp ≤ 2^20 cannot overflow; the cap keeps the
  // number of GPUs a step spans sensible.
  if (static_cast<double>(tp) * static_cast<double>(l.dp) > double{1 << 24}) {
    return absl::InvalidArgumentError(
        StrCat("dp: tp*dp must be at most ", 1 << 24, " GPUs (got ", tp, "*", l.dp, ")"));
  }
  return absl::OkStatus();
}

}  // namespace crest::tuner
