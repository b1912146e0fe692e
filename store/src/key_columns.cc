#include "key_columns.h"

#include <array>

#include "crest/common/str_cat.h"

namespace crest::store::internal {

std::string PrefixedList(std::span<const std::string_view> names, std::string_view prefix) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += StrCat(prefix, name);
  }
  return out;
}

std::string KeyColumnList(std::string_view prefix) {
  static constexpr std::array<std::string_view, 7> kNames = {"dtype", "trans_a", "trans_b", "batch",
                                                             "m",     "n",       "k"};
  return PrefixedList(kNames, prefix);
}

void BindKey(Statement& s, int first, const GemmKey& k) {
  s.Bind(first, tuner::DTypeName(k.dtype))
      .Bind(first + 1, static_cast<int64_t>(k.a_transposed))
      .Bind(first + 2, static_cast<int64_t>(k.b_transposed))
      .Bind(first + 3, k.batch)
      .Bind(first + 4, k.m)
      .Bind(first + 5, k.n)
      .Bind(first + 6, k.k);
}

namespace {
// Stored dtype names are canonical (DTypeName): matched as written, without
// ParseDType's normalizing of what a user may type.
tuner::DType StoredDType(const std::string& name) {
  for (tuner::DType d : {tuner::DType::kBf16, tuner::DType::kFp16, tuner::DType::kFp32,
                         tuner::DType::kTf32, tuner::DType::kFp8E4M3}) {
    if (tuner::DTypeName(d) == name) return d;
  }
  return tuner::ParseDType(name).value_or(tuner::DType::kBf16);
}
}  // namespace

GemmKey ReadKey(const Statement& s) {
  // Stored names are canonical (written by DTypeName). Read in the order
  // every SELECT lists them (dtype, trans_a, trans_b, batch, m, n, k).
  GemmKey key;
  key.dtype = StoredDType(s.Text("dtype"));
  key.a_transposed = s.Int("trans_a") != 0;
  key.b_transposed = s.Int("trans_b") != 0;
  key.batch = s.Int("batch");
  key.m = s.Int("m");
  key.n = s.Int("n");
  key.k = s.Int("k");
  return key;
}

}  // namespace crest::store::internal
