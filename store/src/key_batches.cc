#include "key_batches.h"

#include <algorithm>
#include <tuple>

namespace crest::store::internal {
namespace {

// Which dimension a pass lets vary: 0 = m, 1 = n, 2 = k.
int64_t Dim(const GemmKey& key, int d) { return d == 0 ? key.m : d == 1 ? key.n : key.k; }

// Everything but the varying dimension, for grouping.
auto Fixed(const GemmKey& key, int varying) {
  const int a = varying == 0 ? 1 : 0;
  const int b = varying == 2 ? 1 : 2;
  return std::make_tuple(key.dtype, key.a_transposed, key.b_transposed, key.batch, Dim(key, a),
                         Dim(key, b));
}

KeyRange RangeOf(const GemmKey* const* first, const GemmKey* const* last, int varying) {
  KeyRange r;
  r.prefix = **first;
  r.varying = last - first > 1 ? varying : -1;
  r.m_lo = r.m_hi = (*first)->m;
  r.n_lo = r.n_hi = (*first)->n;
  r.k_lo = r.k_hi = (*first)->k;
  for (auto it = first; it != last; ++it) {
    const int64_t v = Dim(**it, varying);
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
  left.reserve(keys.size());
  for (const auto& key : keys) left.push_back(&key);
  // Pass v keeps the two dimensions other than v fixed and ranges over v:
  // sort by the fixed part, then each run of equal fixed parts is a range.
  std::vector<const GemmKey*> next;
  for (int varying : {2, 1, 0}) {
    std::sort(left.begin(), left.end(), [varying](const GemmKey* a, const GemmKey* b) {
      return Fixed(*a, varying) < Fixed(*b, varying);
    });
    next.clear();
    for (size_t i = 0; i < left.size();) {
      size_t j = i + 1;
      while (j < left.size() && Fixed(*left[j], varying) == Fixed(*left[i], varying)) ++j;
      if (j - i >= 2) {
        out.push_back(RangeOf(&left[i], &left[i] + (j - i), varying));
      } else {
        next.push_back(left[i]);
      }
      i = j;
    }
    left.swap(next);
  }
  for (const GemmKey* key : left) out.push_back(RangeOf(&key, &key + 1, 0));
  return out;
}

}  // namespace crest::store::internal
