#include "key_batches.h"

#include <set>

#include "gtest/gtest.h"

namespace crest::store::internal {
namespace {

GemmKey Key(int64_t m, int64_t n, int64_t k) {
  return {tuner::DType::kBf16, false, true, m, n, k, 1};
}

std::vector<KeyRange> BatchKeys(const std::set<GemmKey>& keys) {
  const std::vector<GemmKey> sorted(keys.begin(), keys.end());
  return internal::BatchKeys(sorted);
}

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
  keys.insert({tuner::DType::kFp16, true, false, 1, 2, 3, 4});
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

namespace crest::store::internal {
namespace {

TEST(BatchKeys, KeysOfManyBatchesAreAllCovered) {
  // Sorted as GemmKey sorts (batch last), keys equal but for K are not
  // neighbours when batches differ: each still lies in a range.
  std::vector<GemmKey> keys;
  for (int64_t k = 100; k < 104; ++k) {
    for (int64_t batch = 1; batch <= 3; ++batch)
      keys.push_back({tuner::DType::kBf16, false, true, 8, 16, k, batch});
  }
  keys = SortedUnique(keys);
  const auto ranges = internal::BatchKeys(keys);
  for (const auto& key : keys) {
    bool covered = false;
    for (const auto& r : ranges) {
      covered =
          covered || (r.prefix.batch == key.batch && key.k >= r.k_lo && key.k <= r.k_hi &&
                      key.m >= r.m_lo && key.m <= r.m_hi && key.n >= r.n_lo && key.n <= r.n_hi);
    }
    EXPECT_TRUE(covered) << key.k << " batch " << key.batch;
  }
}

TEST(KeyRange, KeyAtPutsTheRowsValueInTheVaryingDimension) {
  KeyRange r;
  r.prefix = {tuner::DType::kFp16, true, false, 0, 0, 0, 2};
  r.m_lo = r.m_hi = 8;
  r.n_lo = 16;
  r.n_hi = 64;
  r.k_lo = r.k_hi = 32;
  r.varying = 1;
  EXPECT_EQ(r.KeyAt(40), (GemmKey{tuner::DType::kFp16, true, false, 8, 40, 32, 2}));
  r.varying = -1;
  EXPECT_EQ(r.KeyAt(8), (GemmKey{tuner::DType::kFp16, true, false, 8, 16, 32, 2}));
}

TEST(SortedUnique, SortsAndDropsRepeats) {
  const std::vector<GemmKey> keys = {Key(3, 1, 1), Key(1, 1, 1), Key(3, 1, 1)};
  EXPECT_EQ(SortedUnique(keys), (std::vector<GemmKey>{Key(1, 1, 1), Key(3, 1, 1)}));
}

}  // namespace
}  // namespace crest::store::internal

namespace crest::store::internal {
namespace {

// Want's keys are SortedUnique's, and each caller's key finds itself at its
// slot, on the packed path and on the field-by-field one alike.
void ExpectWantMatchesSortedUnique(const std::vector<GemmKey>& keys) {
  const WantedKeys w = Want(keys);
  EXPECT_EQ(w.keys, SortedUnique(keys));
  ASSERT_EQ(w.slot_of.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(w.keys[w.slot_of[i]], keys[i]) << i;
}

TEST(Want, SortsUniquesAndMapsEveryCallersKeyToItsSlot) {
  std::vector<GemmKey> keys;
  for (int64_t f = 11050; f >= 10794; --f) {  // the caller's order: not sorted, repeats
    keys.push_back(Key(8192, 2 * f, 4096));
    keys.push_back(Key(8192, 4096, f));
    keys.push_back(Key(8192, 4096, f));
  }
  keys.push_back({tuner::DType::kFp16, true, false, 1, 2, 3, 4});
  ExpectWantMatchesSortedUnique(keys);
}

TEST(Want, KeysTooWideToPackSortFieldByField) {
  // 2^40 elements and a negative batch (a merged database is not bound by
  // the CLI's limits): no 64-bit code holds them.
  std::vector<GemmKey> keys = {Key(int64_t{1} << 40, 2, 3),
                               Key(5, 6, 7),
                               {tuner::DType::kBf16, false, true, 1, 1, 1, -3},
                               Key(5, 6, 7),
                               Key(int64_t{1} << 39, 9, 9)};
  ExpectWantMatchesSortedUnique(keys);
}

TEST(BatchKeys, EachRangeNamesItsWantedKeysBySlot) {
  std::vector<GemmKey> keys;
  for (int64_t f = 10794; f <= 10800; f += 2) keys.push_back(Key(8192, 4096, f));
  keys.push_back(Key(1, 1, 1));
  const std::vector<GemmKey> sorted = SortedUnique(keys);
  for (const KeyRange& r : internal::BatchKeys(sorted)) {
    for (const auto& [v, slot] : r.members) {
      EXPECT_EQ(r.KeyAt(v), sorted[slot]);
      EXPECT_EQ(r.SlotAt(v), static_cast<int64_t>(slot));
    }
    if (r.varying == 2) {
      EXPECT_EQ(r.SlotAt(10795), -1) << "in the box, not wanted";
    }
  }
}

TEST(BatchKeys, AWalkOverRowsFindsTheSlotsASearchFindsInOrderRepeatedOrNot) {
  std::vector<GemmKey> keys;
  for (int64_t f = 10794; f <= 10810; f += 4) keys.push_back(Key(8192, 4096, f));
  const std::vector<GemmKey> sorted = SortedUnique(keys);
  const std::vector<KeyRange> ranges = internal::BatchKeys(sorted);
  ASSERT_EQ(ranges.size(), 1u);
  const KeyRange& r = ranges.front();
  // Every value in the box, each twice (a first choice recorded twice), in
  // the index's order; then rows out of order, which a walk cannot assume.
  std::vector<int64_t> rows;
  for (int64_t v = 10790; v <= 10814; ++v) rows.insert(rows.end(), {v, v});
  rows.insert(rows.end(), {10798, 10795, 10794, 10810, 10802});
  size_t next = 0;
  for (int64_t v : rows) EXPECT_EQ(r.SlotAt(v, next), r.SlotAt(v)) << "v = " << v;
  size_t from_start = 0;
  EXPECT_EQ(r.SlotAt(10802, from_start), 2);
  EXPECT_EQ(r.SlotAt(10803, from_start), -1) << "in the box, not wanted";
}

}  // namespace
}  // namespace crest::store::internal
