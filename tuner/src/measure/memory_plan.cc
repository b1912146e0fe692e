#include "crest/tuner/measure/memory_plan.h"

#include <algorithm>

#include "crest/common/str_cat.h"

namespace crest::measure {

MemoryPlan PlanMemory(const GemmShape& g, int64_t l2_bytes, bool cold, int64_t workspace_bytes) {
  MemoryPlan p;
  const int64_t in = ElementBytes(g.dtype);
  const int64_t out = ElementBytes(OutputDType(g.dtype));
  p.operand_bytes = g.batch * ((g.m + g.n) * g.k * in + g.m * g.n * out);
  if (cold && p.operand_bytes > 0) {
    const int64_t needed = (2 * l2_bytes + p.operand_bytes - 1) / p.operand_bytes;
    p.copies = static_cast<int>(std::clamp<int64_t>(needed, 1, kMaxCopies));
  }
  p.workspace_bytes = workspace_bytes;
  p.total_bytes = p.copies * p.operand_bytes + workspace_bytes;
  return p;
}

absl::Status CheckFits(const MemoryPlan& plan, int64_t free_bytes, double headroom) {
  const auto usable = static_cast<int64_t>(static_cast<double>(free_bytes) * (1 - headroom));
  if (plan.total_bytes <= usable) return absl::OkStatus();
  const auto gib = [](int64_t b) { return static_cast<double>(b) / (1 << 30); };
  return absl::ResourceExhaustedError(
      StrCat("memory: this GEMM needs ", gib(plan.total_bytes), " GiB (", plan.copies,
             " operand copies of ", gib(plan.operand_bytes), " GiB + workspace) but only ",
             gib(free_bytes), " GiB of device memory is free; nothing was allocated"));
}

}  // namespace crest::measure
