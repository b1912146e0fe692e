// One GEMM as Crest sees it: sizes, element type and operand layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "crest/tuner/dtype.h"

namespace crest::tuner {

// Which GEMM of a linear layer Y[M,N] = X[M,K] · W[N,K]ᵀ this is.
enum class Pass { kFwd, kDgrad, kWgrad };
std::string_view PassName(Pass pass);  // "fwd", "dgrad", "wgrad"

// Operands are row-major. The layout letters follow BLAS on row-major data:
// "N" means the operand is used as stored, "T" transposed.
//   A is M×K as used: stored [M,K] ("N", K contiguous) or [K,M] ("T").
//   B is K×N as used: stored [K,N] ("N", N contiguous) or [N,K] ("T").
//   C is M×N, stored [M,N] (N contiguous).
// A linear layer's forward is "NT", its data gradient "NN", its weight
// gradient "TN".
struct GemmShape {
  std::string name;  // e.g. "mlp_down.fwd"; empty for an ad-hoc GEMM
  Pass pass = Pass::kFwd;
  int64_t batch = 1;  // strided-batched count; 1 for a plain GEMM
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DType dtype = DType::kBf16;
  bool a_transposed = false;  // A stored [K,M]
  bool b_transposed = true;   // B stored [N,K]

  double Flops() const;        // 2·batch·M·N·K
  std::string Layout() const;  // "NT", "NN", "TN" or "TT"

  // Elements along the contiguous dimension of each operand (the packed
  // leading dimension): what alignment is judged on.
  int64_t ContiguousA() const { return a_transposed ? m : k; }
  int64_t ContiguousB() const { return b_transposed ? k : n; }
  int64_t ContiguousC() const { return n; }
};

// What makes two GEMMs one problem (sizes, dtype, layout; not the name or
// pass), ordered: the key of a map from GEMMs to their times.
using GemmIdentity = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool, DType>;
inline GemmIdentity IdentityOf(const GemmShape& g) {
  return {g.m, g.n, g.k, g.batch, g.a_transposed, g.b_transposed, g.dtype};
}

// Parses "NT", "NN", "TN", "TT" (case-insensitive) into the two flags.
bool ParseLayout(std::string_view text, bool* a_transposed, bool* b_transposed);

}  // namespace crest::tuner
