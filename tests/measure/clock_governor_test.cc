// The clock governor alone (clock_governor.cc), against the GPU scripted from
// the recorded H100 trace: the warm-up, the reload, the keep-load and the
// burst cool-down, each driven directly rather than through a measurement.
#include "crest/measure/clock_governor.h"

#include "gtest/gtest.h"
#include "scripted_gpu.h"

namespace crest::measure {
namespace {

using testing::H100;
using testing::ScriptedGpu;

// One warm-up round on the scripted GPU: its device time [µs].
std::function<absl::StatusOr<double>()> Round(ScriptedGpu& gpu, double burst_us) {
  return [&gpu, burst_us]() -> absl::StatusOr<double> { return gpu.Run(burst_us); };
}

TEST(ClockGovernor, ReadAtStampsTheReadingWithTheClocksTime) {
  ScriptedGpu gpu = H100();
  gpu.SleepS(2.5);
  const GpuReading r = ReadAt(gpu, gpu);
  EXPECT_DOUBLE_EQ(r.time_s, gpu.NowS());
  EXPECT_GT(r.sm_clock_mhz, 0);
}

TEST(ClockGovernor, SustainedWarmsUpUntilTheCappedStateThenNotAgainWhileBusy) {
  ScriptedGpu gpu = H100();
  EngineTuning tuning;
  ClockGovernor governor(tuner::ClockPolicy::kSustained, tuning);
  double kernel_us = 0;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  EXPECT_GE(governor.reference_mhz(), 1410) << "settled at the power-capped clock";
  EXPECT_LE(governor.reference_mhz(), 1515);
  EXPECT_GE(kernel_us, 1e6) << "the trace's power ramps for about a second";
  EXPECT_TRUE(governor.note().empty()) << governor.note();
  governor.MarkBusy(gpu.NowS());
  const double warmed = kernel_us;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  EXPECT_DOUBLE_EQ(kernel_us, warmed) << "a busy GPU was warmed up again";
  EXPECT_EQ(governor.reloads(), 0);
}

TEST(ClockGovernor, AShortGapIsReloadedAndALongOneWarmedUpAgain) {
  ScriptedGpu gpu = H100();
  EngineTuning tuning;
  ClockGovernor governor(tuner::ClockPolicy::kSustained, tuning);
  double kernel_us = 0;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  governor.MarkBusy(gpu.NowS());
  gpu.SleepS(0.15);  // the host's work between two GEMMs
  const double before_reload = kernel_us;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  EXPECT_EQ(governor.reloads(), 1);
  EXPECT_GT(governor.reload_s(), 0);
  EXPECT_LE(governor.reload_s(), tuning.reload_factor * 0.15 + 0.03)
      << "at most reload_factor times the gap (a round past it)";
  EXPECT_GT(kernel_us, before_reload);
  governor.MarkBusy(gpu.NowS());
  gpu.SleepS(5);  // long enough to boost again
  const double before_rewarm = kernel_us;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  EXPECT_EQ(governor.reloads(), 1) << "a long gap is a warm-up, not a reload";
  EXPECT_GE(kernel_us - before_rewarm, 1e6);
}

TEST(ClockGovernor, KeepLoadQueuesNothingBeforeSettlingThenTheHostWorksUsualLength) {
  ScriptedGpu gpu = H100();
  EngineTuning tuning;
  ClockGovernor governor(tuner::ClockPolicy::kSustained, tuning);
  int asked = 0;
  const auto queue = [&](int launches) -> absl::StatusOr<int> {
    asked += launches;
    return launches;
  };
  auto none = governor.KeepLoad(HostWork::kBetweenGemms, 1000, queue, gpu);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0) << "load queued before the GPU settled";
  EXPECT_EQ(asked, 0);
  double kernel_us = 0;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  auto first = governor.KeepLoad(HostWork::kBetweenGemms, 1000, queue, gpu);
  ASSERT_TRUE(first.ok());
  EXPECT_NEAR(*first, tuning.keep_load_first_s * 1e6, 1000) << "keep_load_first_s, untimed yet";
  gpu.SleepS(0.2);  // the host's work took 200 ms
  governor.HostWorkDone(HostWork::kBetweenGemms, gpu);
  auto next = governor.KeepLoad(HostWork::kBetweenGemms, 1000, queue, gpu);
  ASSERT_TRUE(next.ok());
  EXPECT_NEAR(*next, 0.2 * tuning.keep_load_factor * 1e6, 1000)
      << "the last stretch's length times keep_load_factor";
}

TEST(ClockGovernor, BurstIdlesUntilTheBoostClockAndJudgesByIt) {
  ScriptedGpu gpu = H100();
  gpu.Run(3e6);  // three seconds of load: power-capped, well under boost
  EngineTuning tuning;
  tuning.boost_clock_mhz = 1980;
  ClockGovernor governor(tuner::ClockPolicy::kBurst, tuning);
  double kernel_us = 0;
  ASSERT_TRUE(governor.Prepare(Round(gpu, 20000), gpu, gpu, &kernel_us).ok());
  EXPECT_GT(gpu.slept_s(), 0) << "it did not wait for the GPU to cool";
  EXPECT_DOUBLE_EQ(governor.reference_mhz(), 1980);
  EXPECT_EQ(kernel_us, 0) << "a burst policy runs no warm-up";
  EXPECT_TRUE(governor.note().empty()) << governor.note();
}

}  // namespace
}  // namespace crest::measure
