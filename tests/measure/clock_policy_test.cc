// The clock policy, fed the recorded H100 trace row by row (200 ms apart).
#include "crest/measure/clock_policy.h"

#include "gtest/gtest.h"
#include "scripted_gpu.h"

namespace crest::measure {
namespace {

GpuReading At(const TraceRow& row, double t) {
  return {t, row.sm_clock_mhz, row.power_w, row.reasons, true};
}

TEST(SettleDetector, SettlesOnTheRecordedPowerCappedStateAfterThePowerRamp) {
  const auto trace = testing::H100Trace();
  SettleDetector settle;
  double settled_at = -1;
  // Load starts at row 18 (index 17).
  for (size_t i = 17; i < 116 && settled_at < 0; ++i) {
    settle.Add(At(trace[i], 0.2 * static_cast<double>(i - 17)));
    if (settle.Settled()) settled_at = settle.ElapsedS();
  }
  ASSERT_GE(settled_at, 0) << "never settled on the trace";
  EXPECT_GE(settled_at, 1.0) << "settled before the power ramp ended";
  EXPECT_LE(settled_at, 3.0);
  EXPECT_GE(settle.ClockMhz(), 1410);
  EXPECT_LE(settle.ClockMhz(), 1515);
  EXPECT_GT(settle.PowerW(), 650);
}

TEST(SettleDetector, IsNotSettledWhilePowerStillRampsOrBeforeTheMinimum) {
  const auto trace = testing::H100Trace();
  SettleDetector settle;
  for (size_t i = 17; i <= 21; ++i) {  // 266 → 624 W
    settle.Add(At(trace[i], 0.2 * static_cast<double>(i - 17)));
    EXPECT_FALSE(settle.Settled()) << "row " << i + 1;
  }
  SettleDetector steady;
  for (int i = 0; i < 4; ++i) steady.Add({0.2 * i, 1455, 690, 4, true});
  EXPECT_FALSE(steady.Settled()) << "0.6 s is under the 1 s minimum";
}

TEST(SettleDetector, GivesUpAfterTheLimitWhenClocksKeepMoving) {
  SettleDetector settle({.min_s = 1, .max_s = 3});
  for (int i = 0; i <= 20; ++i) {
    settle.Add({0.2 * i, i % 5 < 2 ? 1980.0 : 1300.0, i % 2 ? 300.0 : 700.0, 0, true});
  }
  EXPECT_FALSE(settle.Settled());
  EXPECT_TRUE(settle.TimedOut());
}

TEST(SettleDetector, WithoutReadingsSettlesAfterTheMinimum) {
  SettleDetector settle;
  for (int i = 0; i <= 10; ++i) settle.Add({0.1 * i, 0, 0, 0, false});
  EXPECT_TRUE(settle.Settled());
  EXPECT_EQ(settle.ClockMhz(), 0);
}

TEST(SampleFilter, SustainedKeepsPowerCappedSamplesAndDiscardsOnlySlowdowns) {
  const SampleFilter f(tuner::ClockPolicy::kSustained, 1455);
  EXPECT_FALSE(f.Judge({0, 1410, 690, kReasonSwPowerCap, true})) << "power capping is normal";
  EXPECT_FALSE(f.Judge({0, 1980, 300, 0, true}));
  EXPECT_EQ(f.Judge({0, 1410, 690, kReasonSwPowerCap | kReasonHwThermal, true}),
            Discard::kSlowdown);
  EXPECT_EQ(f.Judge({0, 1400, 500, kReasonHwPowerBrake, true}), Discard::kSlowdown);
  EXPECT_EQ(f.Judge({0, 1000, 500, 0, true}), Discard::kClockFarBelow);  // < 75% of 1455
  EXPECT_FALSE(f.Judge({0, 1100, 500, 0, true}));                        // ≥ 75%
  EXPECT_FALSE(f.Judge({0, 0, 0, 0, false})) << "unknown state: no basis to discard";
}

TEST(SampleFilter, BurstCountsOnlyBoostSamples) {
  const SampleFilter f(tuner::ClockPolicy::kBurst, 1980);
  EXPECT_FALSE(f.Judge({0, 1980, 300, 0, true}));
  EXPECT_EQ(f.Judge({0, 1515, 690, kReasonSwPowerCap, true}), Discard::kPowerCapped);
  EXPECT_EQ(f.Judge({0, 1800, 400, 0, true}), Discard::kBelowBoost);
  EXPECT_EQ(f.Judge({0, 1980, 400, kReasonSwThermal, true}), Discard::kSlowdown);
}

TEST(DescribeReasons, NamesEveryBit) {
  EXPECT_EQ(DescribeReasons(0), "none");
  EXPECT_EQ(DescribeReasons(kReasonSwPowerCap), "sw-power-cap");
  EXPECT_EQ(DescribeReasons(kReasonSwPowerCap | kReasonHwThermal), "sw-power-cap+hw-thermal");
  EXPECT_EQ(DescribeReasons(0x10000), "other");
}

}  // namespace
}  // namespace crest::measure
