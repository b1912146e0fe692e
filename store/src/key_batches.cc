#include "key_batches.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <tuple>
#include <utility>

namespace crest::store::internal {

int64_t KeyDim(const GemmKey& key, int d) { return d == 0 ? key.m : d == 1 ? key.n : key.k; }

FixedParts FixedPartsOf(const GemmKey& key, int varying) {
  const int a = varying == 0 ? 1 : 0;
  const int b = varying == 2 ? 1 : 2;
  return {{static_cast<int64_t>(key.dtype), key.a_transposed, key.b_transposed, key.batch,
           KeyDim(key, a), KeyDim(key, b)}};
}

namespace {

// Bits that hold `v` (1 for 0).
int Width(uint64_t v) { return v == 0 ? 1 : static_cast<int>(std::bit_width(v)); }

KeyRange RangeOf(std::span<const GemmKey* const> group, int varying, const GemmKey* base) {
  KeyRange r;
  const GemmKey& first = *group.front();
  r.prefix = first;
  r.varying = group.size() > 1 ? varying : -1;
  r.m_lo = r.m_hi = first.m;
  r.n_lo = r.n_hi = first.n;
  r.k_lo = r.k_hi = first.k;
  int64_t& lo = varying == 0 ? r.m_lo : varying == 1 ? r.n_lo : r.k_lo;
  int64_t& hi = varying == 0 ? r.m_hi : varying == 1 ? r.n_hi : r.k_hi;
  const int by = r.varying == -1 ? 0 : varying;  // a single key: its M
  r.members.reserve(group.size());
  for (const GemmKey* key : group) {
    lo = std::min(lo, KeyDim(*key, varying));
    hi = std::max(hi, KeyDim(*key, varying));
    r.members.emplace_back(KeyDim(*key, by), static_cast<uint32_t>(key - base));
  }
  std::sort(r.members.begin(), r.members.end());
  return r;
}

// The order of `n` items: by code(i), their fields packed into one word
// below the `index_bits` their index takes, when `packed` (the sort then
// compares integers: sorting 48-byte keys field by field was a tenth of a
// ranking); else by less(a, b). Ties keep index order either way.
template <typename Code, typename Less>
std::vector<uint32_t> OrderOf(size_t n, bool packed, int index_bits, const Code& code,
                              const Less& less) {
  std::vector<uint32_t> order(n);
  if (packed) {
    std::vector<uint64_t> codes(n);
    for (size_t i = 0; i < n; ++i) codes[i] = code(i) << index_bits | i;
    std::sort(codes.begin(), codes.end());
    const uint64_t mask = (uint64_t{1} << index_bits) - 1;
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(codes[i] & mask);
    return order;
  }
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), less);
  return order;
}

// One pass: groups of two or more keys with equal fixed parts become
// ranges; the rest is returned. `sorted`: the keys are already in order of
// their fixed parts (the first pass, over keys sorted as GemmKey sorts).
std::vector<const GemmKey*> Pass(std::vector<const GemmKey*> keys, int varying, bool sorted,
                                 const GemmKey* base, std::vector<KeyRange>& out) {
  if (!sorted) {
    std::vector<const GemmKey*> in_order;
    in_order.reserve(keys.size());
    for (uint32_t i : FixedOrder(keys, varying)) in_order.push_back(keys[i]);
    keys = std::move(in_order);
  }
  std::vector<const GemmKey*> left;
  for (size_t i = 0; i < keys.size();) {
    const FixedParts fixed = FixedPartsOf(*keys[i], varying);
    size_t j = i + 1;
    while (j < keys.size() && FixedPartsOf(*keys[j], varying) == fixed) ++j;
    if (j - i >= 2) {
      out.push_back(RangeOf({keys.data() + i, j - i}, varying, base));
    } else {
      left.push_back(keys[i]);
    }
    i = j;
  }
  return left;
}

}  // namespace

std::vector<uint32_t> FixedOrder(const std::vector<const GemmKey*>& keys, int varying) {
  const int a = varying == 0 ? 1 : 0;
  const int b = varying == 2 ? 1 : 2;
  uint64_t most_a = 0, most_b = 0, most_batch = 0;
  bool negative = false;
  for (const GemmKey* key : keys) {
    negative = negative || KeyDim(*key, a) < 0 || KeyDim(*key, b) < 0 || key->batch < 0;
    most_a = std::max(most_a, static_cast<uint64_t>(KeyDim(*key, a)));
    most_b = std::max(most_b, static_cast<uint64_t>(KeyDim(*key, b)));
    most_batch = std::max(most_batch, static_cast<uint64_t>(key->batch));
  }
  const int wa = Width(most_a), wb = Width(most_b), wt = Width(most_batch);
  const int wi = Width(keys.empty() ? 0 : keys.size() - 1);
  return OrderOf(
      keys.size(), !negative && 3 + 2 + wa + wb + wt + wi <= 64, wi,
      [&](size_t i) {
        const GemmKey& key = *keys[i];
        uint64_t c = static_cast<uint64_t>(key.dtype);
        c = c << 1 | static_cast<uint64_t>(key.a_transposed);
        c = c << 1 | static_cast<uint64_t>(key.b_transposed);
        c = c << wt | static_cast<uint64_t>(key.batch);
        c = c << wa | static_cast<uint64_t>(KeyDim(key, a));
        return c << wb | static_cast<uint64_t>(KeyDim(key, b));
      },
      [&](uint32_t x, uint32_t y) {
        return FixedPartsOf(*keys[x], varying) < FixedPartsOf(*keys[y], varying);
      });
}

int64_t KeyRange::SlotAt(int64_t v) const {
  auto it = std::lower_bound(members.begin(), members.end(), std::pair<int64_t, uint32_t>(v, 0));
  return it != members.end() && it->first == v ? static_cast<int64_t>(it->second) : -1;
}

int64_t KeyRange::SlotAt(int64_t v, size_t& next) const {
  while (next < members.size() && members[next].first < v) ++next;
  if (next < members.size() && members[next].first == v) return members[next].second;
  // Between the member before and members[next]: not wanted; else the rows
  // came out of order, and the search answers.
  if (next == 0 || members[next - 1].first < v) return -1;
  return SlotAt(v);
}

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

namespace {

// The caller's indices of `keys` in GemmKey's order (dtype, transposes, m,
// n, k, batch; ties by index): where every dimension is nonnegative and the
// widths the set needs fit, one 64-bit code a key, so the sort compares
// integers (sorting 48-byte keys field by field was a tenth of a ranking).
std::vector<uint32_t> KeyOrder(std::span<const GemmKey> keys) {
  uint64_t m = 0, n = 0, k = 0, batch = 0;
  bool negative = false;
  for (const GemmKey& key : keys) {
    negative = negative || key.m < 0 || key.n < 0 || key.k < 0 || key.batch < 0;
    m = std::max(m, static_cast<uint64_t>(key.m));
    n = std::max(n, static_cast<uint64_t>(key.n));
    k = std::max(k, static_cast<uint64_t>(key.k));
    batch = std::max(batch, static_cast<uint64_t>(key.batch));
  }
  const int wm = Width(m), wn = Width(n), wk = Width(k), wb = Width(batch);
  const int wi = Width(keys.empty() ? 0 : keys.size() - 1);
  return OrderOf(
      keys.size(), !negative && 3 + 2 + wm + wn + wk + wb + wi <= 64, wi,
      [&](size_t i) {
        const GemmKey& key = keys[i];
        uint64_t c = static_cast<uint64_t>(key.dtype);
        c = c << 1 | static_cast<uint64_t>(key.a_transposed);
        c = c << 1 | static_cast<uint64_t>(key.b_transposed);
        c = c << wm | static_cast<uint64_t>(key.m);
        c = c << wn | static_cast<uint64_t>(key.n);
        c = c << wk | static_cast<uint64_t>(key.k);
        return c << wb | static_cast<uint64_t>(key.batch);
      },
      [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
}

}  // namespace

WantedKeys Want(std::span<const GemmKey> keys) {
  WantedKeys w;
  w.keys.reserve(keys.size());
  w.slot_of.resize(keys.size());
  for (uint32_t i : KeyOrder(keys)) {
    if (w.keys.empty() || !(w.keys.back() == keys[i])) w.keys.push_back(keys[i]);
    w.slot_of[i] = static_cast<uint32_t>(w.keys.size() - 1);
  }
  return w;
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
  left = Pass(std::move(left), 2, /*sorted=*/true, keys.data(), out);
  left = Pass(std::move(left), 1, /*sorted=*/false, keys.data(), out);
  left = Pass(std::move(left), 0, /*sorted=*/false, keys.data(), out);
  for (const GemmKey* key : left) out.push_back(RangeOf({&key, 1}, 0, keys.data()));
  return out;
}

}  // namespace crest::store::internal
