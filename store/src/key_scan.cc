#include "key_scan.h"

#include <cstdint>

#include "crest/common/str_cat.h"
#include "crest/tuner/dtype.h"

namespace crest::store::internal {

namespace {

std::string BuildKeyRangeWhere(int varying) {
  return StrCat("dtype = ?3 AND trans_a = ?4 AND trans_b = ?5 AND batch = ?6 AND ",
                varying == 0 ? "m BETWEEN ?7 AND ?8" : "m = ?7", " AND ",
                varying == 1 ? "n BETWEEN ?9 AND ?10" : "n = ?9", " AND ",
                varying == 2 ? "k BETWEEN ?11 AND ?12" : "k = ?11");
}

}  // namespace

const std::string& KeyRangeWhere(int varying) {
  static const std::string kWhere[4] = {BuildKeyRangeWhere(-1), BuildKeyRangeWhere(0),
                                        BuildKeyRangeWhere(1), BuildKeyRangeWhere(2)};
  return kWhere[varying + 1];
}

void BindRange(Statement& s, const KeyRange& r) {
  s.Bind(3, tuner::DTypeName(r.prefix.dtype))
      .Bind(4, static_cast<int64_t>(r.prefix.a_transposed))
      .Bind(5, static_cast<int64_t>(r.prefix.b_transposed))
      .Bind(6, r.prefix.batch)
      .Bind(7, r.m_lo)
      .Bind(9, r.n_lo)
      .Bind(11, r.k_lo);
  if (r.varying == 0) s.Bind(8, r.m_hi);
  if (r.varying == 1) s.Bind(10, r.n_hi);
  if (r.varying == 2) s.Bind(12, r.k_hi);
}

std::string_view VaryingColumn(const KeyRange& range) {
  return range.varying == 1 ? "n" : range.varying == 2 ? "k" : "m";
}

}  // namespace crest::store::internal
