// Internal to crest::store: turns a set of GEMM keys into few index range
// scans. A d_ff window's GEMMs share all but one dimension, so a ranking
// costs a handful of queries instead of one per key.
#pragma once

#include <set>
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
};

// Groups keys that differ in one dimension only: first those sharing M and
// N (a K range), then those sharing M and K (an N range), then those sharing
// N and K (an M range); what is left is single keys.
std::vector<KeyRange> BatchKeys(const std::set<GemmKey>& keys);

}  // namespace crest::store::internal
