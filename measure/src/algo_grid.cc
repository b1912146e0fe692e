#include "crest/measure/algo_grid.h"

#include <algorithm>

namespace crest::measure {
namespace {

std::vector<AlgoConfig> ConfigsOf(const AlgoCaps& caps) {
  const std::vector<uint32_t> tiles = caps.tiles.empty() ? std::vector<uint32_t>{0} : caps.tiles;
  const std::vector<uint32_t> stages = caps.stages.empty() ? std::vector<uint32_t>{0} : caps.stages;
  // (split-K, reduction) pairs: none first, then each supported pair.
  std::vector<std::pair<int32_t, uint32_t>> splits = {{1, 0}};
  if (caps.split_k) {
    for (int32_t split : kSplitKValues) {
      for (uint32_t scheme : kReductionSchemes) {
        if ((caps.reduction_mask & scheme) != 0) splits.emplace_back(split, scheme);
      }
    }
  }
  std::vector<AlgoConfig> out;
  for (const auto& [split, scheme] : splits) {
    for (uint32_t swizzle = 0; swizzle <= (caps.swizzle ? 1u : 0u); ++swizzle) {
      for (int32_t custom = 0; custom <= std::max(caps.custom_max, 0); ++custom) {
        for (uint32_t stage : stages) {
          for (uint32_t tile : tiles) {
            out.push_back({caps.algo_id, tile, stage, custom, swizzle, split, scheme});
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

std::vector<AlgoConfig> ExhaustiveGrid(std::span<const AlgoCaps> algos) {
  std::vector<std::vector<AlgoConfig>> lists;
  size_t longest = 0;
  for (const AlgoCaps& caps : algos) {
    lists.push_back(ConfigsOf(caps));
    longest = std::max(longest, lists.back().size());
  }
  std::vector<AlgoConfig> out;
  for (size_t i = 0; i < longest; ++i) {
    for (const auto& list : lists) {
      if (i < list.size()) out.push_back(list[i]);
    }
  }
  return out;
}

}  // namespace crest::measure
