#include "crest/tuner/shapes.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "crest/common/str_cat.h"
#include "crest/tuner/limits.h"
#include "sizes.h"

namespace crest::tuner {
namespace {

// Appends the GEMM to `out`, made in place: this runs for every GEMM of
// every ranked candidate (a GEMM made apart, moved in and destroyed cost 7%
// of a ranking's plan; three appends for the name had cost a fifth).
void Add(std::vector<GemmShape>& out, std::string_view row, Pass pass, int64_t batch, int64_t m,
         int64_t n, int64_t k, DType dtype, std::string_view layout) {
  GemmShape& g = out.emplace_back();
  const std::string_view pass_name = PassName(pass);
  g.name.resize(row.size() + 1 + pass_name.size());
  char* at = std::copy(row.begin(), row.end(), g.name.data());
  *at++ = '.';
  std::copy(pass_name.begin(), pass_name.end(), at);
  g.pass = pass;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.dtype = dtype;
  // FP8 tensor-core GEMMs run in one layout only (cuBLASLt on Hopper and Ada):
  // fp8 training keeps transposed FP8 copies of its operands (Transformer
  // Engine's fused cast-transpose), so every fp8 GEMM, gradients included,
  // is NT with the same M, N and K.
  ParseLayout(dtype == DType::kFp8E4M3 ? kFp8Layout : layout, &g.a_transposed, &g.b_transposed);
}

// A linear layer Y[M,N] = X[M,K]·W[N,K]ᵀ and, for training, its gradients:
// dX[M,K] = dY[M,N]·W[N,K] and dW[N,K] = dY[M,N]ᵀ·X[M,K].
void AddLinear(std::vector<GemmShape>& out, std::string_view row, int64_t m, int64_t n, int64_t k,
               DType dtype, bool backward) {
  Add(out, row, Pass::kFwd, 1, m, n, k, dtype, "NT");
  if (!backward) return;
  Add(out, row, Pass::kDgrad, 1, m, k, n, dtype, "NN");
  Add(out, row, Pass::kWgrad, 1, n, k, m, dtype, "TN");
}

void AddMlp(std::vector<GemmShape>& out, int64_t tokens, int64_t hidden, int64_t d_ff, int64_t tp,
            DType dtype, const ShapeOptions& options) {
  const bool bwd = options.include_backward;
  if (options.mlp == MlpKind::kGelu) {
    AddLinear(out, "mlp_up", tokens, d_ff / tp, hidden, dtype, bwd);
  } else if (options.fuse_gate_up) {
    AddLinear(out, "mlp_gate_up", tokens, 2 * d_ff / tp, hidden, dtype, bwd);
  } else {
    AddLinear(out, "mlp_gate", tokens, d_ff / tp, hidden, dtype, bwd);
    AddLinear(out, "mlp_up", tokens, d_ff / tp, hidden, dtype, bwd);
  }
  AddLinear(out, "mlp_down", tokens, hidden, d_ff / tp, dtype, bwd);
}

}  // namespace

absl::StatusOr<std::vector<GemmShape>> TransformerGemms(const ModelConfig& c,
                                                        const ShapeOptions& options) {
  if (auto s = ValidateModelConfig(c); !s.ok()) return s;
  const int64_t t = c.tp;
  const int64_t tokens = c.Tokens();
  const int64_t d = c.HeadDim();
  const int64_t s = c.seq;
  const int64_t heads_per_rank = c.micro_batch * c.heads / t;
  const bool bwd = options.include_backward;

  std::vector<GemmShape> out;
  out.reserve(bwd ? 27 : 9);
  AddLinear(out, "qkv", tokens, (c.heads + 2 * c.KvHeads()) * d / t, c.hidden, c.dtype, bwd);

  // Attention runs one GEMM per (sequence, head) on this rank. For these,
  // "dgrad" is the gradient of the left operand and "wgrad" of the right.
  // S = Q·Kᵀ: dQ = dS·K, dK = dSᵀ·Q.
  Add(out, "attn_score", Pass::kFwd, heads_per_rank, s, s, d, c.dtype, "NT");
  if (bwd) {
    Add(out, "attn_score", Pass::kDgrad, heads_per_rank, s, d, s, c.dtype, "NN");
    Add(out, "attn_score", Pass::kWgrad, heads_per_rank, s, d, s, c.dtype, "TN");
  }
  // O = P·V: dP = dO·Vᵀ, dV = Pᵀ·dO.
  Add(out, "attn_value", Pass::kFwd, heads_per_rank, s, d, s, c.dtype, "NN");
  if (bwd) {
    Add(out, "attn_value", Pass::kDgrad, heads_per_rank, s, s, d, c.dtype, "NT");
    Add(out, "attn_value", Pass::kWgrad, heads_per_rank, s, d, s, c.dtype, "TN");
  }

  AddLinear(out, "attn_out", tokens, c.hidden, c.heads * d / t, c.dtype, bwd);
  AddMlp(out, tokens, c.hidden, c.d_ff, t, c.dtype, options);
  AddLinear(out, "logits", tokens, c.vocab / t, c.hidden, c.dtype, bwd);
  return out;
}

int64_t MlpGemmCount(const ShapeOptions& options) {
  const bool separate_gate = options.mlp != MlpKind::kGelu && !options.fuse_gate_up;
  return (separate_gate ? 3 : 2) * (options.include_backward ? 3 : 1);
}

absl::Status AppendMlpGemms(int64_t tokens, int64_t hidden, int64_t d_ff, int64_t tp, DType dtype,
                            const ShapeOptions& options, std::vector<GemmShape>& out) {
  using internal::CheckSize;
  if (auto s = CheckSize("tokens", tokens, kMaxTokens); !s.ok()) return s;
  if (auto s = CheckSize("hidden", hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("d-ff", d_ff, kMaxDff); !s.ok()) return s;
  if (auto s = CheckSize("tp", tp, kMaxTp); !s.ok()) return s;
  if (d_ff % tp != 0) {
    return absl::InvalidArgumentError(
        StrCat("d-ff (", d_ff, ") must be divisible by tp (", tp, ")"));
  }
  AddMlp(out, tokens, hidden, d_ff, tp, dtype, options);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<GemmShape>> MlpGemms(int64_t tokens, int64_t hidden, int64_t d_ff,
                                                int64_t tp, DType dtype,
                                                const ShapeOptions& options) {
  std::vector<GemmShape> out;
  out.reserve(static_cast<size_t>(MlpGemmCount(options)));
  if (auto s = AppendMlpGemms(tokens, hidden, d_ff, tp, dtype, options, out); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<GemmShape>> LogitsGemms(int64_t tokens, int64_t hidden, int64_t vocab,
                                                   int64_t tp, DType dtype,
                                                   const ShapeOptions& options) {
  using internal::CheckSize;
  if (auto s = CheckSize("tokens", tokens, kMaxTokens); !s.ok()) return s;
  if (auto s = CheckSize("hidden", hidden, kMaxHidden); !s.ok()) return s;
  if (auto s = CheckSize("vocab", vocab, kMaxVocab); !s.ok()) return s;
  if (auto s = CheckSize("tp", tp, kMaxTp); !s.ok()) return s;
  if (vocab % tp != 0) {
    return absl::InvalidArgumentError(
        StrCat("vocab (", vocab, ") must be divisible by tp (", tp, ")"));
  }
  std::vector<GemmShape> out;
  AddLinear(out, "logits", tokens, vocab / tp, hidden, dtype, options.include_backward);
  return out;
}

bool IsAttentionCore(const GemmShape& g) {
  return g.name.starts_with("attn_score.") || g.name.starts_with("attn_value.");
}

}  // namespace crest::tuner
