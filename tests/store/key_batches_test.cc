#include "key_batches.h"

#include "gtest/gtest.h"

namespace crest::store::internal {
namespace {

GemmKey Key(int64_t m, int64_t n, int64_t k) { return {DType::kBf16, false, true, m, n, k, 1}; }

TEST(BatchKeys, ADffWindowBecomesTwoRangeScans) {
  std::set<GemmKey> keys;
  for (int64_t f = 10794; f <= 11050; ++f) {
    keys.insert(Key(8192, 2 * f, 4096));  // gate_up: N varies
    keys.insert(Key(8192, 4096, f));      // down: K varies
  }
  const auto ranges = BatchKeys(keys);
  ASSERT_EQ(ranges.size(), 2u);
  int n_ranges = 0;
  int k_ranges = 0;
  for (const auto& r : ranges) {
    if (r.n_lo == r.n_hi) {
      ++k_ranges;
      EXPECT_EQ(r.n_lo, 4096);
      EXPECT_EQ(r.k_lo, 10794);
      EXPECT_EQ(r.k_hi, 11050);
    } else {
      ++n_ranges;
      EXPECT_EQ(r.k_lo, 4096);
      EXPECT_EQ(r.n_lo, 2 * 10794);
      EXPECT_EQ(r.n_hi, 2 * 11050);
    }
  }
  EXPECT_EQ(n_ranges, 1);
  EXPECT_EQ(k_ranges, 1);
}

TEST(BatchKeys, WeightGradientsRangeOverM) {
  std::set<GemmKey> keys;
  for (int64_t f = 10794; f <= 11050; ++f) keys.insert(Key(2 * f, 4096, 8192));
  const auto ranges = BatchKeys(keys);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].m_lo, 2 * 10794);
  EXPECT_EQ(ranges[0].m_hi, 2 * 11050);
}

TEST(BatchKeys, EveryKeyIsCoveredBySomeRange) {
  std::set<GemmKey> keys = {Key(1, 2, 3), Key(1, 2, 9), Key(7, 8, 9), Key(7, 5, 9)};
  keys.insert({DType::kFp16, true, false, 1, 2, 3, 4});
  const auto ranges = BatchKeys(keys);
  for (const auto& key : keys) {
    bool covered = false;
    for (const auto& r : ranges) {
      covered =
          covered || (r.prefix.dtype == key.dtype && key.m >= r.m_lo && key.m <= r.m_hi &&
                      r.prefix.batch == key.batch && r.prefix.a_transposed == key.a_transposed &&
                      r.prefix.b_transposed == key.b_transposed && key.n >= r.n_lo &&
                      key.n <= r.n_hi && key.k >= r.k_lo && key.k <= r.k_hi);
    }
    EXPECT_TRUE(covered) << key.m << " " << key.n << " " << key.k;
  }
}

}  // namespace
}  // namespace crest::store::internal
