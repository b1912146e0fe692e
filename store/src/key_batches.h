// Internal to crest::store: turns a set of GEMM keys into few index range
// scans. A d_ff window's GEMMs share all but one dimension, so a ranking
// costs a handful of queries instead of one per key.
#pragma once

#include <span>
#include <vector>

#include "crest/store/records.h"

namespace crest::store::internal {

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

  // The key of a row of this range whose varying dimension (M for a single
  // key) is `v`.
  GemmKey KeyAt(int64_t v) const;
};

// `keys` sorted and without repeats: what BatchKeys and the scans take.
std::vector<GemmKey> SortedUnique(std::span<const GemmKey> keys);

// Groups keys that differ in one dimension only: first those sharing M and
// N (a K range), then those sharing M and K (an N range), then those sharing
// N and K (an M range); what is left is single keys. `keys` sorted, unique.
std::vector<KeyRange> BatchKeys(std::span<const GemmKey> keys);

}  // namespace crest::store::internal
