// The device-free statistics of a measurement: medians, their confidence
// intervals, outlier rejection and summaries. Each is fed plain numbers, so
// tests script timings without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "crest/tuner/measurement.h"

namespace crest::measure {

// The median of `values`; 0 for none.
double Median(std::span<const double> values);

// A distribution-free 95% confidence interval of the median: the order
// statistics x(l) and x(n+1-l) with the largest l whose binomial coverage
// is at least 95%. With too few samples for that coverage (n < 6) it is the
// whole range [min, max], at lower confidence: `coverage` says which
// (MedianIntervalCoverage). Empty input gives {0, 0, 0}.
struct Interval {
  double low = 0;
  double high = 0;
  double coverage = 0;
};
Interval MedianInterval(std::span<const double> samples);

// Median, mean, min, stdev, count and the median's 95% interval of
// `samples_us` [µs]; the GPU-state fields are left for the caller.
tuner::SampleStats Summarize(std::span<const double> samples_us);

// Samples further than `k` scaled median absolute deviations from the median
// (k = 5 by default; the scale is at least 1% of the median) are outliers: a
// preempted launch or a stray context switch, not the kernel. Returns the
// kept samples, in input order.
std::vector<double> RejectOutliers(std::span<const double> samples_us, double k = 5.0);

}  // namespace crest::measure
