// The device-free parts of a measurement, fed scripted numbers.
#include <cmath>
#include <random>

#include "crest/tuner/measure/memory_plan.h"
#include "crest/tuner/measure/sampling.h"
#include "crest/tuner/measure/verification.h"
#include "gtest/gtest.h"

namespace crest::measure {
namespace {

TEST(Summarize, ReportsMedianMeanMinStdevCountAndMedianClock) {
  const std::vector<double> us = {10, 12, 11, 13, 9};
  const std::vector<double> mhz = {1980, 1970, 1980, 1755, 1980};
  const SampleStats s = Summarize(us, mhz);
  EXPECT_DOUBLE_EQ(s.median_us, 11);
  EXPECT_DOUBLE_EQ(s.mean_us, 11);
  EXPECT_DOUBLE_EQ(s.min_us, 9);
  EXPECT_NEAR(s.stdev_us, std::sqrt(2.5), 1e-12);
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(Summarize(std::vector<double>{4, 8}).median_us, 6);
  EXPECT_EQ(Summarize({}).samples, 0);
}

TEST(RejectOutliers, DropsAPreemptedLaunchButKeepsOrdinaryNoise) {
  std::vector<double> us = {100.0, 100.4, 99.7, 100.2, 99.9, 100.1, 100.3, 99.8};
  us.push_back(340.0);  // a context switch in the middle of a sample
  const auto kept = RejectOutliers(us);
  EXPECT_EQ(kept.size(), 8u);
  for (double x : kept) EXPECT_LT(x, 101);
  const std::vector<double> flat = {5, 5, 5, 5, 5};
  EXPECT_EQ(RejectOutliers(flat).size(), 5u);
}

TEST(ThrottleFilter, KeepsSamplesNearTheRunningClockOnly) {
  const ThrottleFilter filter(1980);
  EXPECT_TRUE(filter.Keep(1980));
  EXPECT_TRUE(filter.Keep(1935));   // within 3%
  EXPECT_FALSE(filter.Keep(1755));  // power-capped
  EXPECT_TRUE(filter.Keep(0));      // clock unknown: no basis to discard
  EXPECT_TRUE(ThrottleFilter(0).Keep(100));
}

TEST(StoppingRule, StopsWhenQuietEnoughAfterTheMinimum) {
  StoppingRule rule(
      {.min_samples = 10, .max_samples = 1000, .max_relative_noise = 0.01, .max_seconds = 10});
  for (int i = 0; i < 9; ++i) {
    rule.Add(100.0 + (i % 2 ? 0.3 : -0.3));
    EXPECT_FALSE(rule.Finished(0.1)) << "fewer than min_samples";
  }
  rule.Add(100);
  EXPECT_TRUE(rule.Converged());
  EXPECT_TRUE(rule.Finished(0.1));
  EXPECT_LT(rule.RelativeNoise(), 0.01);
}

TEST(StoppingRule, NoisySamplesRunToTheSampleOrTimeLimit) {
  StoppingRule rule(
      {.min_samples = 10, .max_samples = 50, .max_relative_noise = 0.01, .max_seconds = 1});
  std::mt19937 rng(3);
  std::normal_distribution<double> noisy(100, 10);
  for (int i = 0; i < 49; ++i) rule.Add(noisy(rng));
  EXPECT_FALSE(rule.Converged());
  EXPECT_FALSE(rule.Finished(0.5));
  EXPECT_TRUE(rule.Finished(1.0)) << "time limit";
  rule.Add(noisy(rng));
  EXPECT_TRUE(rule.Finished(0.5)) << "sample limit";
  EXPECT_FALSE(rule.Converged());
}

TEST(Verify, CorrectOutputPassesAndAWrongOrNonFiniteOneFails) {
  std::vector<SampledElement> good = {{1.0, 1.001, 50}, {-3.0, -2.99, 80}};
  EXPECT_TRUE(VerifySamples(good, DType::kBf16).ok);
  // Cancellation: ref near 0 with large terms must not fail a correct answer.
  std::vector<SampledElement> cancel = {{0.02, 0.0, 200}};
  EXPECT_TRUE(VerifySamples(cancel, DType::kBf16).ok);
  std::vector<SampledElement> wrong = {{1.0, 1.0, 50}, {30.0, 3.0, 80}};
  const auto bad = VerifySamples(wrong, DType::kBf16);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.note.find("above the bf16 tolerance"), std::string::npos) << bad.note;
  std::vector<SampledElement> nan = {{NAN, 1.0, 1}};
  EXPECT_FALSE(VerifySamples(nan, DType::kFp32).ok);
  // The same error passes bf16 but fails fp32.
  std::vector<SampledElement> loose = {{1.01, 1.0, 10}};
  EXPECT_TRUE(VerifySamples(loose, DType::kBf16).ok);
  EXPECT_FALSE(VerifySamples(loose, DType::kFp32).ok);
}

TEST(MemoryPlan, ColdModeRotatesCopiesToTwiceTheL2) {
  GemmShape small;
  small.m = small.n = small.k = 1024;  // 6 MiB of bf16 operands
  const MemoryPlan cold = PlanMemory(small, 50 << 20, true, 32 << 20);
  EXPECT_EQ(cold.operand_bytes, 3 * 1024 * 1024 * 2);
  EXPECT_EQ(cold.copies, 17);  // ⌈100 MiB / 6 MiB⌉
  EXPECT_EQ(cold.total_bytes, 17 * cold.operand_bytes + (32 << 20));
  EXPECT_EQ(PlanMemory(small, 50 << 20, false, 0).copies, 1);
  GemmShape big;
  big.m = 8192;
  big.n = 22016;
  big.k = 4096;
  EXPECT_EQ(PlanMemory(big, 50 << 20, true, 0).copies, 1);
}

TEST(MemoryPlan, RefusesBeforeAllocatingWhenItCannotFit) {
  GemmShape huge;
  huge.m = huge.n = huge.k = 200000;
  const MemoryPlan plan = PlanMemory(huge, 50 << 20, true, 0);
  const absl::Status s = CheckFits(plan, int64_t{80} << 30);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("nothing was allocated"), std::string::npos) << s;
  GemmShape fine;
  fine.m = fine.n = fine.k = 4096;
  EXPECT_TRUE(CheckFits(PlanMemory(fine, 50 << 20, true, 0), int64_t{80} << 30).ok());
}

}  // namespace
}  // namespace crest::measure
