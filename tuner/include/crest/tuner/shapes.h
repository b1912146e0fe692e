// A model config → the GEMMs it runs (docs/shapes.md, "The GEMMs of a transformer
// layer"), per tensor-parallel rank.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/model_config.h"

namespace crest::tuner {

// The MLP's kind: SwiGLU (gate, up and down projections, d_ff each of gate
// and up; Llama, Mistral) or GELU (up and down; GPT-2/3, MPT, BLOOM).
enum class MlpKind { kSwiGlu, kGelu };

struct ShapeOptions {
  // Add each GEMM's data- and weight-gradient GEMMs ("--pass train").
  bool include_backward = false;
  MlpKind mlp = MlpKind::kSwiGlu;
  // SwiGLU gate and up projections as one GEMM of N = 2f/t (the default), or
  // as two GEMMs of N = f/t each.
  bool fuse_gate_up = true;
};

// The one layout fp8 GEMMs run in: every fp8 GEMM (gradients included) is
// NT, on transposed copies of its operands, as fp8 training does it; the
// transposes themselves are not GEMMs and are not counted.
inline constexpr const char* kFp8Layout = "NT";

// Every GEMM of one layer plus the logits, in table order: qkv, attn_score,
// attn_value, attn_out, mlp_gate_up (or mlp_gate, mlp_up; GELU: mlp_up),
// mlp_down, logits;
// each GEMM's ".fwd" and, with include_backward, its ".dgrad" and ".wgrad".
// An invalid config is InvalidArgument (see ValidateModelConfig).
absl::StatusOr<std::vector<GemmShape>> TransformerGemms(const ModelConfig& config,
                                                        const ShapeOptions& options);

// Whether a GEMM of TransformerGemms is one of the attention core's two
// (attn_score, attn_value), which a fused attention kernel replaces.
bool IsAttentionCore(const GemmShape& gemm);

// The SwiGLU MLP alone for `tokens` rows: what `crest dff` times.
// REQUIRES nothing; bad sizes are InvalidArgument naming the field.
absl::StatusOr<std::vector<GemmShape>> MlpGemms(int64_t tokens, int64_t hidden, int64_t d_ff,
                                                int64_t tp, DType dtype,
                                                const ShapeOptions& options);
// How many GEMMs MlpGemms gives under `options`.
int64_t MlpGemmCount(const ShapeOptions& options);
// MlpGemms' GEMMs appended to `out` (nothing appended on an error).
absl::Status AppendMlpGemms(int64_t tokens, int64_t hidden, int64_t d_ff, int64_t tp, DType dtype,
                            const ShapeOptions& options, std::vector<GemmShape>& out);

// The logits GEMM alone (N = vocab/tp): what `crest vocab` times.
// InvalidArgument names the field (tokens, hidden, vocab, tp).
absl::StatusOr<std::vector<GemmShape>> LogitsGemms(int64_t tokens, int64_t hidden, int64_t vocab,
                                                   int64_t tp, DType dtype,
                                                   const ShapeOptions& options);

}  // namespace crest::tuner
