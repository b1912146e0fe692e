// How much device memory a measurement needs, and how many operand copies
// keep the L2 cold.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"

namespace crest::measure {

struct MemoryPlan {
  int64_t operand_bytes = 0;  // one copy of A, B and C [bytes]
  int copies = 1;             // rotated copies (cold L2: together >= 2·L2)
  int64_t workspace_bytes = 0;
  int64_t total_bytes = 0;  // copies·operand_bytes + workspace
};

// Plans operands for `gemm`. Cold mode rotates enough copies that their
// total is at least twice the L2 (capped at kMaxCopies); warm mode uses one.
MemoryPlan PlanMemory(const GemmShape& gemm, int64_t l2_bytes, bool cold, int64_t workspace_bytes);

inline constexpr int kMaxCopies = 64;

// OK when the plan fits in `free_bytes` with `headroom` (a fraction kept
// free); else ResourceExhausted saying how much is needed and free.
absl::Status CheckFits(const MemoryPlan& plan, int64_t free_bytes, double headroom = 0.1);

}  // namespace crest::measure
