#include "crest/measure/algo_grid.h"

#include <set>

#include "gtest/gtest.h"

namespace crest::measure {
namespace {

TEST(AlgoGrid, WalksEveryCapabilityOnce) {
  AlgoCaps caps;
  caps.algo_id = 66;
  caps.tiles = {20, 21, 22};
  caps.stages = {8, 9};
  caps.split_k = true;
  caps.reduction_mask = 1 | 4;  // in-place and output type
  caps.swizzle = true;
  caps.custom_max = 1;
  const auto grid = ExhaustiveGrid({&caps, 1});
  // (1 + 3 split-K values × 2 schemes) × 2 swizzles × 2 custom × 2 stages × 3 tiles.
  EXPECT_EQ(grid.size(), 7u * 2 * 2 * 2 * 3);
  std::set<std::tuple<uint32_t, uint32_t, int32_t, uint32_t, int32_t, uint32_t>> distinct;
  for (const AlgoConfig& c : grid) {
    distinct.insert({c.tile, c.stages, c.custom_option, c.swizzle, c.split_k, c.reduction_scheme});
    EXPECT_EQ(c.split_k == 1, c.reduction_scheme == 0);
    EXPECT_NE(c.reduction_scheme, 2u) << "a scheme outside the mask";
  }
  EXPECT_EQ(distinct.size(), grid.size());
  // Plain configurations first: every tile before any split-K.
  EXPECT_EQ(grid[0], (AlgoConfig{66, 20, 8, 0, 0, 1, 0}));
  EXPECT_EQ(grid[1].tile, 21u);
  EXPECT_EQ(grid[2].tile, 22u);
}

TEST(AlgoGrid, AlgorithmsTakeTurnsSoACapSamplesAllOfThem) {
  AlgoCaps a;
  a.algo_id = 1;
  a.tiles = {1, 2, 3, 4, 5, 6, 7, 8};
  AlgoCaps b;
  b.algo_id = 2;  // no tile or stage list: one "undefined" configuration
  const std::vector<AlgoCaps> caps = {a, b};
  const auto grid = ExhaustiveGrid(caps);
  ASSERT_EQ(grid.size(), 9u);
  EXPECT_EQ(grid[0].algo_id, 1);
  EXPECT_EQ(grid[1].algo_id, 2);
  EXPECT_EQ(grid[1].tile, 0u);
  EXPECT_EQ(grid[2].algo_id, 1);
}

}  // namespace
}  // namespace crest::measure
