#include "key_batches.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

namespace crest::store::internal {
namespace {

using Prefix = std::tuple<DType, bool, bool, int64_t>;  // dtype, ta, tb, batch

Prefix PrefixOf(const GemmKey& k) { return {k.dtype, k.a_transposed, k.b_transposed, k.batch}; }

// Which dimension a pass lets vary: 0 = m, 1 = n, 2 = k.
int64_t Dim(const GemmKey& key, int d) { return d == 0 ? key.m : d == 1 ? key.n : key.k; }

KeyRange RangeOf(const std::vector<const GemmKey*>& members, int varying) {
  const GemmKey& first = *members.front();
  KeyRange r;
  r.prefix = first;
  r.varying = members.size() > 1 ? varying : -1;
  r.m_lo = r.m_hi = first.m;
  r.n_lo = r.n_hi = first.n;
  r.k_lo = r.k_hi = first.k;
  for (const GemmKey* key : members) {
    const int64_t v = Dim(*key, varying);
    int64_t& lo = varying == 0 ? r.m_lo : varying == 1 ? r.n_lo : r.k_lo;
    int64_t& hi = varying == 0 ? r.m_hi : varying == 1 ? r.n_hi : r.k_hi;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return r;
}

}  // namespace

std::vector<KeyRange> BatchKeys(const std::set<GemmKey>& keys) {
  std::vector<KeyRange> out;
  std::vector<const GemmKey*> left;
  for (const auto& key : keys) left.push_back(&key);
  // Pass v keeps the two dimensions other than v fixed and ranges over v.
  for (int varying : {2, 1, 0}) {
    std::map<std::tuple<Prefix, int64_t, int64_t>, std::vector<const GemmKey*>> groups;
    const int a = varying == 0 ? 1 : 0;
    const int b = varying == 2 ? 1 : 2;
    for (const GemmKey* key : left) {
      groups[{PrefixOf(*key), Dim(*key, a), Dim(*key, b)}].push_back(key);
    }
    left.clear();
    for (const auto& [group, members] : groups) {
      if (members.size() < 2) {
        left.push_back(members.front());
      } else {
        out.push_back(RangeOf(members, varying));
      }
    }
  }
  for (const GemmKey* key : left) out.push_back(RangeOf({key}, 0));
  return out;
}

}  // namespace crest::store::internal
