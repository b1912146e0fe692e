#include "crest/measure/sampling.h"

#include <cmath>
#include <numeric>

#include "crest/measure/options.h"
#include "gtest/gtest.h"

namespace crest::measure {
namespace {

std::vector<double> OneTo(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Summarize, ReportsMedianMeanMinStdevCountAndTheMediansInterval) {
  const std::vector<double> us = {10, 12, 11, 13, 9};
  const tuner::SampleStats s = Summarize(us);
  EXPECT_DOUBLE_EQ(s.median_us, 11);
  EXPECT_DOUBLE_EQ(s.mean_us, 11);
  EXPECT_DOUBLE_EQ(s.min_us, 9);
  EXPECT_NEAR(s.stdev_us, std::sqrt(2.5), 1e-12);
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.ci_low_us, 9);  // five samples: the whole range
  EXPECT_DOUBLE_EQ(s.ci_high_us, 13);
  EXPECT_DOUBLE_EQ(Summarize(std::vector<double>{4, 8}).median_us, 6);
  EXPECT_EQ(Summarize({}).samples, 0);
}

TEST(MedianInterval, SaysItsTrueCoverageWhichReaches95PercentFromSixSamples) {
  // The range of n samples covers the median with probability 1 - 2^(1-n):
  // 5 samples 93.75% (what was printed as 95%), 6 samples 96.875%.
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(5)).coverage, 0.9375);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(3)).coverage, 0.75);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(6)).coverage, 0.96875);
  EXPECT_EQ(tuner::CoverageText(5), "93.75%");
  EXPECT_EQ(tuner::CoverageText(6), "95%");
  for (int n = 6; n <= 200; ++n) {
    EXPECT_GE(tuner::MedianIntervalCoverage(n), 0.95) << n;
    // The largest rank that keeps 95%: one more would not.
    const tuner::MedianOrderInterval at = tuner::MedianIntervalOf(n);
    if (at.rank + 1 <= (n + 1) / 2) {
      double below = 0;  // P(X < rank + 1), X ~ Binomial(n, 1/2)
      for (int i = 0; i <= at.rank; ++i) {
        below += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                          n * std::log(2.0));
      }
      EXPECT_LT(1 - 2 * below, 0.95) << n;
    }
  }
  EXPECT_EQ(MeasureOptions{}.min_samples, 6) << "the default reaches 95%";
}

TEST(MedianInterval, TakesTheBinomialOrderStatistics) {
  // 95% order-statistic intervals: n=10 → x(2)..x(9); n=20 → x(6)..x(15);
  // n=100 → x(40)..x(61).
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(10)).low, 2);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(10)).high, 9);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(20)).low, 6);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(20)).high, 15);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(100)).low, 40);
  EXPECT_DOUBLE_EQ(MedianInterval(OneTo(100)).high, 61);
  // Order of input does not matter; too few samples give the range.
  const std::vector<double> shuffled = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(MedianInterval(shuffled).low, 1);
  EXPECT_DOUBLE_EQ(MedianInterval(shuffled).high, 5);
  EXPECT_DOUBLE_EQ(MedianInterval({}).high, 0);
}

TEST(MedianInterval, NarrowsWithMoreSamples) {
  const Interval few = MedianInterval(OneTo(20));
  const Interval many = MedianInterval(OneTo(2000));
  EXPECT_LT((many.high - many.low) / 2000, (few.high - few.low) / 20);
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

}  // namespace
}  // namespace crest::measure
