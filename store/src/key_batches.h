// Internal to crest::store: turns a set of GEMM keys into few index range
// scans. A d_ff window's GEMMs share all but one dimension, so a ranking
// costs a handful of queries instead of one per key.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "crest/store/records.h"

namespace crest::store::internal {

// A key's dimension `d`: 0 = M, 1 = N, 2 = K.
int64_t KeyDim(const GemmKey& key, int d);

// Everything of a key but dimension `varying` (dtype, transposes, batch and
// the other two dimensions): keys with equal parts lie on one line, which a
// KeyRange (and a run's pack, run_packs.h) spans. Any order that puts equal
// parts together will do.
struct FixedParts {
  std::array<int64_t, 6> parts;
  auto operator<=>(const FixedParts&) const = default;
};
FixedParts FixedPartsOf(const GemmKey& key, int varying);

// The order of `keys` by FixedPartsOf(key, varying), as indexes into
// `keys`: each line's keys together, and in the order given within a line
// (keys sorted as GemmKey sorts come out ascending in `varying`). One 64-bit
// code a key where the widths fit, else FixedParts' comparison.
std::vector<uint32_t> FixedOrder(const std::vector<const GemmKey*>& keys, int varying);

// Keys with equal dtype, layout and batch, and M, N and K in their ranges.
// The box may hold rows that are not wanted: callers keep only rows whose
// key is in the requested set.
struct KeyRange {
  GemmKey prefix;    // dtype, transposes, batch (m, n and k unused)
  int varying = -1;  // the dimension that ranges: 0 = m, 1 = n, 2 = k; -1: one key
  int64_t m_lo = 0;
  int64_t m_hi = 0;
  int64_t n_lo = 0;
  int64_t n_hi = 0;
  int64_t k_lo = 0;
  int64_t k_hi = 0;
  // The wanted keys of the range: the value of each one's varying dimension
  // (M for a single key) and its index in the keys BatchKeys was given,
  // ascending in value.
  std::vector<std::pair<int64_t, uint32_t>> members;

  // The key of a row of this range whose varying dimension (M for a single
  // key) is `v`.
  GemmKey KeyAt(int64_t v) const;
  // The index (in BatchKeys' keys) of the wanted key whose varying value is
  // `v`, or -1 when the row at `v` is in the box but not wanted.
  int64_t SlotAt(int64_t v) const;
  // The same for rows in ascending v (a scan of the index), walking from
  // `next` (0 for a range's first row), which it moves to v's place: a step,
  // not a search, a row. A row out of order is searched for.
  int64_t SlotAt(int64_t v, size_t& next) const;
};

// `keys` sorted and without repeats: what BatchKeys and the scans take.
std::vector<GemmKey> SortedUnique(std::span<const GemmKey> keys);

// SortedUnique's keys, and where each of the caller's keys went: slot_of[i]
// is keys' index of the caller's i-th key (one sort, no search per key).
struct WantedKeys {
  std::vector<GemmKey> keys;
  std::vector<uint32_t> slot_of;
};
WantedKeys Want(std::span<const GemmKey> keys);

// Groups keys that differ in one dimension only: first those sharing M and
// N (a K range), then those sharing M and K (an N range), then those sharing
// N and K (an M range); what is left is single keys. `keys` sorted, unique.
std::vector<KeyRange> BatchKeys(std::span<const GemmKey> keys);

}  // namespace crest::store::internal
