#include "crest/measure/arena.h"

#include <algorithm>

#include "crest/common/str_cat.h"

namespace crest::measure {
namespace {

int64_t Padded(int64_t bytes) {
  return (bytes + kOperandAlignment - 1) / kOperandAlignment * kOperandAlignment;
}

struct Sizes {
  int64_t a = 0, b = 0, c = 0;
};

Sizes SizesOf(const tuner::GemmShape& g) {
  const int64_t in = tuner::ElementBytes(g.dtype);
  return {g.batch * g.m * g.k * in, g.batch * g.k * g.n * in,
          g.batch * g.m * g.n * tuner::ElementBytes(tuner::OutputDType(g.dtype))};
}

}  // namespace

int OperandCopies(const tuner::GemmShape& g, int64_t l2_bytes, tuner::CacheMode cache) {
  const Sizes s = SizesOf(g);
  const int64_t one = s.a + s.b + s.c;
  if (cache == tuner::CacheMode::kWarm || one <= 0) return 1;
  const int64_t needed = (2 * l2_bytes + one - 1) / one;
  return static_cast<int>(std::clamp<int64_t>(needed, 1, kMaxCopies));
}

bool ArenaPlan::Holds(const ArenaPlan& o) const {
  return o.input_bytes <= input_bytes && o.output_bytes <= output_bytes &&
         o.workspace_bytes <= workspace_bytes;
}

ArenaPlan PlanArena(std::span<const tuner::GemmShape> gemms, int64_t l2_bytes,
                    tuner::CacheMode cache, int64_t workspace_bytes) {
  ArenaPlan plan;
  plan.workspace_bytes = workspace_bytes;
  for (const tuner::GemmShape& g : gemms) {
    const Sizes s = SizesOf(g);
    const int64_t copies = OperandCopies(g, l2_bytes, cache);
    plan.input_bytes = std::max(plan.input_bytes, copies * (Padded(s.a) + Padded(s.b)));
    plan.output_bytes = std::max(plan.output_bytes, copies * Padded(s.c));
  }
  return plan;
}

OperandLayout LayOut(const tuner::GemmShape& g, int64_t l2_bytes, tuner::CacheMode cache,
                     const ArenaPlan& arena) {
  OperandLayout out;
  const Sizes s = SizesOf(g);
  out.copies = OperandCopies(g, l2_bytes, cache);
  out.a_bytes = s.a;
  out.b_bytes = s.b;
  out.c_bytes = s.c;
  for (int64_t c = 0; c < out.copies; ++c) {
    const int64_t input = c * (Padded(s.a) + Padded(s.b));
    out.a_offset.push_back(input);
    out.b_offset.push_back(input + Padded(s.a));
    out.c_offset.push_back(arena.input_bytes + c * Padded(s.c));
  }
  out.workspace_offset = arena.input_bytes + arena.output_bytes;
  return out;
}

absl::Status CheckFits(int64_t needed_bytes, int64_t free_bytes, double headroom) {
  const auto usable = static_cast<int64_t>(static_cast<double>(free_bytes) * (1 - headroom));
  if (needed_bytes <= usable) return absl::OkStatus();
  const auto gib = [](int64_t b) { return static_cast<double>(b) / (1 << 30); };
  return absl::ResourceExhaustedError(
      StrCat("memory: this GEMM needs ", gib(needed_bytes),
             " GiB (its operand copies and the workspace) but only ", gib(free_bytes),
             " GiB of device memory is free; nothing was allocated"));
}

}  // namespace crest::measure
