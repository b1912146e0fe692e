// The exhaustive algorithm search's grid, device-free: from each algorithm's
// capabilities (as cuBLASLt reports them) to the configurations to try, in
// the order in which a cap on their number keeps the most diverse ones.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace crest::measure {

// One algorithm's capabilities (cublasLtMatmulAlgoCapGetAttribute).
struct AlgoCaps {
  int algo_id = 0;
  std::vector<uint32_t> tiles;   // CUBLASLT_ALGO_CAP_TILE_IDS; empty: only "undefined" (0)
  std::vector<uint32_t> stages;  // CUBLASLT_ALGO_CAP_STAGES_IDS; empty: only "undefined" (0)
  bool split_k = false;          // CUBLASLT_ALGO_CAP_SPLITK_SUPPORT
  uint32_t reduction_mask = 0;   // CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK
  bool swizzle = false;          // CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT
  int32_t custom_max = 0;        // CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX
};

// The configuration attributes of one candidate (CUBLASLT_ALGO_CONFIG_*).
struct AlgoConfig {
  int algo_id = 0;
  uint32_t tile = 0;
  uint32_t stages = 0;
  int32_t custom_option = 0;
  uint32_t swizzle = 0;
  int32_t split_k = 1;
  uint32_t reduction_scheme = 0;  // 0 without split-K
  bool operator==(const AlgoConfig&) const = default;
};

inline constexpr int32_t kSplitKValues[] = {2, 4, 8};
inline constexpr uint32_t kReductionSchemes[] = {1, 2, 4};  // in-place, compute type, output type

// Every configuration of every algorithm. The algorithms take turns, so a
// cap samples all of them; within one, the plain configurations (no split-K,
// no swizzle, custom option 0) over every tile and stage come first, then
// custom options, swizzling and split-K with each supported reduction.
std::vector<AlgoConfig> ExhaustiveGrid(std::span<const AlgoCaps> algos);

}  // namespace crest::measure
