#include "crest/measure/options.h"

#include "gtest/gtest.h"

namespace crest::measure {
namespace {

TEST(MeasureOptions, DefaultsAreValid) { EXPECT_TRUE(ValidateMeasureOptions({}).ok()); }

TEST(MeasureOptions, ABadValueNamesTheFieldTheFlagAndTheLimit) {
  MeasureOptions o;
  o.top_k = 0;
  EXPECT_EQ(ValidateMeasureOptions(o).message(),
            "measure.top_k (--top-k): must be between 1 and 64 (got 0)");
  o = {};
  o.max_noise = 0;
  EXPECT_EQ(ValidateMeasureOptions(o).message(),
            "measure.max_noise (--max-noise): must be in (0, 0.5] (got 0)");
  o = {};
  o.min_samples = 2;
  EXPECT_NE(ValidateMeasureOptions(o).message().find("min_samples"), std::string::npos);
  o = {};
  o.max_seconds = 601;
  EXPECT_EQ(ValidateMeasureOptions(o).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MeasureMode, NamesRoundTrip) {
  EXPECT_EQ(tuner::ParseCacheMode(tuner::CacheModeName(tuner::CacheMode::kWarm)),
            tuner::CacheMode::kWarm);
  EXPECT_EQ(tuner::ParseClockPolicy(tuner::ClockPolicyName(tuner::ClockPolicy::kBurst)),
            tuner::ClockPolicy::kBurst);
  EXPECT_FALSE(tuner::ParseClockPolicy("boost").has_value());
  EXPECT_LT((tuner::MeasureMode{tuner::CacheMode::kCold, tuner::ClockPolicy::kSustained}),
            (tuner::MeasureMode{tuner::CacheMode::kWarm, tuner::ClockPolicy::kSustained}));
}

}  // namespace
}  // namespace crest::measure
