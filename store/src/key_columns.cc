#include "key_columns.h"

namespace crest::store::internal {

void BindKey(Statement& s, int first, const GemmKey& k) {
  s.Bind(first, DTypeName(k.dtype))
      .Bind(first + 1, static_cast<int64_t>(k.a_transposed))
      .Bind(first + 2, static_cast<int64_t>(k.b_transposed))
      .Bind(first + 3, k.batch)
      .Bind(first + 4, k.m)
      .Bind(first + 5, k.n)
      .Bind(first + 6, k.k);
}

GemmKey ReadKey(const Statement& s) {
  // Stored names are canonical (written by DTypeName).
  const DType dtype = ParseDType(s.Text("dtype")).value_or(DType::kBf16);
  return {dtype,         s.Int("trans_a") != 0, s.Int("trans_b") != 0, s.Int("m"),
          s.Int("n"),    s.Int("k"),            s.Int("batch")};
}

}  // namespace crest::store::internal
