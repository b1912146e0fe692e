#include "crest/measure/arena.h"

#include "gemm_testing.h"
#include "gtest/gtest.h"

namespace crest::measure {
namespace {

using crest::testing::Gemm;

TEST(Arena, ColdModeRotatesCopiesToTwiceTheL2) {
  const tuner::GemmShape small = Gemm(1024, 1024, 1024);                   // 6 MiB of bf16 operands
  EXPECT_EQ(OperandCopies(small, 50 << 20, tuner::CacheMode::kCold), 17);  // ⌈100 MiB / 6 MiB⌉
  EXPECT_EQ(OperandCopies(small, 50 << 20, tuner::CacheMode::kWarm), 1);
  EXPECT_EQ(OperandCopies(Gemm(8192, 22016, 4096), 50 << 20, tuner::CacheMode::kCold), 1);
  EXPECT_EQ(OperandCopies(Gemm(8, 8, 8), 50 << 20, tuner::CacheMode::kCold), kMaxCopies);
}

TEST(Arena, OnePlanHoldsEveryGemmOfTheSweep) {
  // The h=4096 MLP: gate+up fused [8192,4096]·[21888,4096]ᵀ and down.
  const std::vector<tuner::GemmShape> plan = {Gemm(8192, 21888, 4096), Gemm(8192, 4096, 10944),
                                              Gemm(1024, 1024, 1024)};
  const ArenaPlan arena = PlanArena(plan, 50 << 20, tuner::CacheMode::kCold, 32 << 20);
  EXPECT_EQ(arena.workspace_bytes, 32 << 20);
  for (const tuner::GemmShape& g : plan) {
    EXPECT_TRUE(arena.Holds(PlanArena({&g, 1}, 50 << 20, tuner::CacheMode::kCold, 32 << 20)));
  }
  // The largest inputs are the down projection's; 17 copies of the small
  // GEMM are smaller than either.
  EXPECT_EQ(arena.input_bytes, (int64_t{8192} * 10944 + int64_t{4096} * 10944) * 2);
  EXPECT_EQ(arena.output_bytes, int64_t{8192} * 21888 * 2);
  const tuner::GemmShape bigger = Gemm(16384, 21888, 4096);
  EXPECT_FALSE(arena.Holds(PlanArena({&bigger, 1}, 50 << 20, tuner::CacheMode::kCold, 32 << 20)));
}

TEST(Arena, LayoutIsAlignedAndNothingOverlaps) {
  const tuner::GemmShape g = Gemm(1000, 1000, 1001);  // odd sizes: padding matters
  const ArenaPlan arena = PlanArena({&g, 1}, 50 << 20, tuner::CacheMode::kCold, 1 << 20);
  const OperandLayout l = LayOut(g, 50 << 20, tuner::CacheMode::kCold, arena);
  ASSERT_GT(l.copies, 1);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int c = 0; c < l.copies; ++c) {
    const auto u = static_cast<size_t>(c);
    for (int64_t offset : {l.a_offset[u], l.b_offset[u], l.c_offset[u]}) {
      EXPECT_EQ(offset % kOperandAlignment, 0);
    }
    spans.push_back({l.a_offset[u], l.a_offset[u] + l.a_bytes});
    spans.push_back({l.b_offset[u], l.b_offset[u] + l.b_bytes});
    spans.push_back({l.c_offset[u], l.c_offset[u] + l.c_bytes});
    EXPECT_LE(l.b_offset[u] + l.b_bytes, arena.input_bytes) << "inputs leave their region";
    EXPECT_GE(l.c_offset[u], arena.input_bytes) << "an output lies among the inputs";
    EXPECT_LE(l.c_offset[u] + l.c_bytes, l.workspace_offset);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first);
  EXPECT_EQ(l.workspace_offset + arena.workspace_bytes, arena.TotalBytes());
}

TEST(Arena, RefusesBeforeAllocatingWhenItCannotFit) {
  const absl::Status s = CheckFits(int64_t{100} << 30, int64_t{80} << 30);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("nothing was allocated"), std::string::npos) << s;
  EXPECT_TRUE(CheckFits(int64_t{1} << 30, int64_t{80} << 30).ok());
}

}  // namespace
}  // namespace crest::measure
