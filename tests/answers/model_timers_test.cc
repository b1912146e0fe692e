#include "model_timers.h"

#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/timing.h"
#include "crest/tuner/timing_ops.h"
#include "dff_testing.h"
#include "gtest/gtest.h"

namespace crest::answers {
namespace {

using crest::testing::EveryCandidate;

// The model's sum is the d_ff answer's shortcut: it must be exactly the sum
// of its timed parts, for every candidate of fwd and train windows, fused or
// not, and missing (NotFound) where a part is.
TEST(ModelTimers, ASetsSumIsTheSumOfItsPredictedPartsOrMissingWithThem) {
  int missing = 0;
  for (const char* gpu_name : {"h100", "a100"}) {
    const tuner::GpuSpec& gpu = **tuner::FindGpu(gpu_name);
    const SetTimers timers = internal::ModelTimers(gpu);
    ASSERT_TRUE(timers.sum);
    for (tuner::DType dtype : {tuner::DType::kBf16, tuner::DType::kFp8E4M3}) {
      for (bool train : {false, true}) {
        tuner::DffQuery q = EveryCandidate(4096, 5);
        q.train = train;
        q.fuse_gate_up = !train;
        q.dtype = dtype;
        auto plan = tuner::PlanDff(q);
        ASSERT_TRUE(plan.ok()) << plan.status();
        for (const std::span<const tuner::GemmShape> set : plan->gemms) {
          auto parts = timers.time(set);
          auto sum = timers.sum(set);
          ASSERT_EQ(sum.status().code(), parts.status().code()) << gpu_name;
          if (!parts.ok()) {
            EXPECT_EQ(sum.status().code(), absl::StatusCode::kNotFound) << "fp8 on an A100";
            ++missing;
            continue;
          }
          const tuner::Timing want = tuner::SumTimings(*parts);
          const tuner::Timing got = tuner::TimingOf(*sum);
          EXPECT_EQ(got.time_us, want.time_us);
          EXPECT_EQ(got.low_us, want.low_us);
          EXPECT_EQ(got.high_us, want.high_us);
          EXPECT_EQ(got.source, want.source);
          EXPECT_EQ(got.provenance, want.provenance);
          EXPECT_FALSE(got.provenance.empty()) << "the model version";
          EXPECT_TRUE(got.runs.empty());
        }
      }
    }
  }
  EXPECT_GT(missing, 0) << "fp8 on an A100 has no path";
}

}  // namespace
}  // namespace crest::answers
