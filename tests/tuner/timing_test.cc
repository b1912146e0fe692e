#include <gtest/gtest.h>

#include <vector>

#include "crest/tuner/timing_ops.h"

namespace crest::tuner {
namespace {

RunInfo JobRun(int64_t job, std::string device) {
  RunInfo r;
  r.job_id = job;
  r.job_uid = "uid-" + std::to_string(job);
  r.device_uuid = std::move(device);
  return r;
}

TEST(Timing, AMeasurementWithoutAnIntervalIsExact) {
  const Timing t = MeasuredTiming(100, 0, 0);
  EXPECT_EQ(t.source, Source::kMeasured);
  EXPECT_EQ(t.low_us, 100);
  EXPECT_EQ(t.high_us, 100);
  const Timing with = MeasuredTiming(100, 98, 103);
  EXPECT_EQ(with.low_us, 98);
  EXPECT_EQ(with.high_us, 103);
}

TEST(Timing, ATimeWithNoIntervalEndsAtItself) {
  Timing t;
  t.time_us = 50;
  EXPECT_EQ(LowOf(t), 50);
  EXPECT_EQ(HighOf(t), 50);
  t.low_us = 45;
  t.high_us = 60;
  EXPECT_EQ(LowOf(t), 45);
  EXPECT_EQ(HighOf(t), 60);
}

TEST(Timing, ASumAddsIntervalsAndSaysWhenItMixesKinds) {
  Timing measured = MeasuredTiming(100, 98, 103);
  measured.runs = {JobRun(1, "GPU-a")};
  Timing exact;
  exact.time_us = 10;
  exact.source = Source::kMeasured;
  exact.runs = {JobRun(1, "GPU-a")};
  const std::vector<Timing> one_kind = {measured, exact};
  const Timing sum = SumTimings(one_kind);
  EXPECT_EQ(sum.source, Source::kMeasured);
  EXPECT_EQ(sum.time_us, 110);
  EXPECT_EQ(sum.low_us, 108);
  EXPECT_EQ(sum.high_us, 113);
  EXPECT_EQ(sum.runs.size(), 1u);  // one run, named once
  const std::vector<Timing> two_kinds = {measured, PredictedTiming(10, 0.2, "m1")};
  EXPECT_EQ(SumTimings(two_kinds).source, Source::kMixed);
}

TEST(Timing, APredictionsIntervalIsItsClassErrorEitherSide) {
  const Timing t = PredictedTiming(200, 0.05, "tilewave-2+x");
  EXPECT_EQ(t.source, Source::kPredicted);
  EXPECT_DOUBLE_EQ(t.low_us, 190);
  EXPECT_DOUBLE_EQ(t.high_us, 210);
  EXPECT_EQ(t.provenance, "tilewave-2+x");
}

TEST(Timing, RunsAreOneWhenJobAndDeviceAreTheSame) {
  EXPECT_TRUE(SameRun(JobRun(1, "GPU-a"), JobRun(1, "GPU-a")));
  EXPECT_FALSE(SameRun(JobRun(1, "GPU-a"), JobRun(1, "GPU-b")));
  EXPECT_FALSE(SameRun(JobRun(1, "GPU-a"), JobRun(2, "GPU-a")));
  std::vector<RunInfo> runs = {JobRun(1, "GPU-a")};
  const std::vector<RunInfo> more = {JobRun(2, "GPU-a"), JobRun(1, "GPU-a"), JobRun(1, "GPU-b")};
  MergeRuns(runs, more);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].job_id, 2);
  EXPECT_EQ(runs[2].device_uuid, "GPU-b");
}

}  // namespace
}  // namespace crest::tuner
