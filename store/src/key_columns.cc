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

GemmKey ReadKey(const Statement& s, int first) {
  // Stored names are canonical (written by DTypeName).
  const DType dtype = ParseDType(s.Text(first)).value_or(DType::kBf16);
  return {dtype,
          s.Int(first + 1) != 0,
          s.Int(first + 2) != 0,
          s.Int(first + 4),
          s.Int(first + 5),
          s.Int(first + 6),
          s.Int(first + 3)};
}

}  // namespace crest::store::internal
