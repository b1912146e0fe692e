#include "key_batches.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace crest::store::internal {
namespace {

// Which dimension a pass lets vary: 0 = m, 1 = n, 2 = k.
int64_t Dim(const GemmKey& key, int d) { return d == 0 ? key.m : d == 1 ? key.n : key.k; }

// Everything but the varying dimension, for grouping.
struct Fixed {
  std::array<int64_t, 6> parts;
  auto operator<=>(const Fixed&) const = default;
};

Fixed FixedOf(const GemmKey& key, int varying) {
  const int a = varying == 0 ? 1 : 0;
  const int b = varying == 2 ? 1 : 2;
  return {{static_cast<int64_t>(key.dtype), key.a_transposed, key.b_transposed, key.batch,
           Dim(key, a), Dim(key, b)}};
}

KeyRange RangeOf(std::span<const GemmKey* const> group, int varying) {
  KeyRange r;
  const GemmKey& first = *group.front();
  r.prefix = first;
  r.varying = group.size() > 1 ? varying : -1;
  r.m_lo = r.m_hi = first.m;
  r.n_lo = r.n_hi = first.n;
  r.k_lo = r.k_hi = first.k;
  int64_t& lo = varying == 0 ? r.m_lo : varying == 1 ? r.n_lo : r.k_lo;
  int64_t& hi = varying == 0 ? r.m_hi : varying == 1 ? r.n_hi : r.k_hi;
  for (const GemmKey* key : group) {
    lo = std::min(lo, Dim(*key, varying));
    hi = std::max(hi, Dim(*key, varying));
  }
  return r;
}

// One pass: groups of two or more keys with equal fixed parts become
// ranges; the rest is returned. `sorted`: the keys are already in order of
// their fixed parts (the first pass, over keys sorted as GemmKey sorts).
std::vector<const GemmKey*> Pass(std::vector<const GemmKey*> keys, int varying, bool sorted,
                                 std::vector<KeyRange>& out) {
  std::vector<std::pair<Fixed, const GemmKey*>> by_fixed;
  by_fixed.reserve(keys.size());
  for (const GemmKey* key : keys) by_fixed.emplace_back(FixedOf(*key, varying), key);
  if (!sorted) {
    std::sort(by_fixed.begin(), by_fixed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::vector<const GemmKey*> left;
  std::vector<const GemmKey*> group;
  for (size_t i = 0; i < by_fixed.size();) {
    size_t j = i + 1;
    while (j < by_fixed.size() && by_fixed[j].first == by_fixed[i].first) ++j;
    if (j - i >= 2) {
      group.clear();
      for (size_t g = i; g < j; ++g) group.push_back(by_fixed[g].second);
      out.push_back(RangeOf(group, varying));
    } else {
      left.push_back(by_fixed[i].second);
    }
    i = j;
  }
  return left;
}

}  // namespace

GemmKey KeyRange::KeyAt(int64_t v) const {
  GemmKey key = prefix;
  key.m = varying == 0 || varying == -1 ? v : m_lo;
  key.n = varying == 1 ? v : n_lo;
  key.k = varying == 2 ? v : k_lo;
  return key;
}

std::vector<GemmKey> SortedUnique(std::span<const GemmKey> keys) {
  std::vector<GemmKey> out(keys.begin(), keys.end());
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<KeyRange> BatchKeys(std::span<const GemmKey> keys) {
  std::vector<KeyRange> out;
  std::vector<const GemmKey*> left;
  left.reserve(keys.size());
  for (const GemmKey& key : keys) left.push_back(&key);
  // Pass v keeps the two dimensions other than v fixed and ranges over v.
  // GemmKey sorts by dtype, layout, M, N, K, batch: keys equal but for K sit
  // together (batch aside), so the K pass needs no sort; a K pass split by
  // batch makes more ranges, never wrong ones.
  left = Pass(std::move(left), 2, /*sorted=*/true, out);
  left = Pass(std::move(left), 1, /*sorted=*/false, out);
  left = Pass(std::move(left), 0, /*sorted=*/false, out);
  for (const GemmKey* key : left) out.push_back(RangeOf({&key, 1}, 0));
  return out;
}

}  // namespace crest::store::internal
