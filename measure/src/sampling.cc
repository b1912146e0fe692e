#include "crest/measure/sampling.h"

#include <algorithm>
#include <cmath>

namespace crest::measure {
namespace {

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
}

}  // namespace

double Median(std::span<const double> values) { return MedianOf({values.begin(), values.end()}); }

Interval MedianInterval(std::span<const double> samples) {
  if (samples.empty()) return {};
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<int64_t>(sorted.size());
  const tuner::MedianOrderInterval at = tuner::MedianIntervalOf(n);
  return {sorted[static_cast<size_t>(at.rank - 1)], sorted[static_cast<size_t>(n - at.rank)],
          at.coverage};
}

tuner::SampleStats Summarize(std::span<const double> samples) {
  tuner::SampleStats s;
  if (samples.empty()) return s;
  s.samples = static_cast<int64_t>(samples.size());
  s.median_us = MedianOf({samples.begin(), samples.end()});
  s.min_us = *std::min_element(samples.begin(), samples.end());
  double sum = 0;
  for (double x : samples) sum += x;
  s.mean_us = sum / static_cast<double>(samples.size());
  double sq = 0;
  for (double x : samples) sq += (x - s.mean_us) * (x - s.mean_us);
  s.stdev_us = samples.size() > 1 ? std::sqrt(sq / static_cast<double>(samples.size() - 1)) : 0;
  const Interval ci = MedianInterval(samples);
  s.ci_low_us = ci.low;
  s.ci_high_us = ci.high;
  return s;
}

std::vector<double> RejectOutliers(std::span<const double> samples, double k) {
  if (samples.size() < 4) return {samples.begin(), samples.end()};
  const double median = MedianOf({samples.begin(), samples.end()});
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::abs(x - median));
  // 1.4826·MAD estimates the standard deviation of normal noise. With few or
  // quantised samples the MAD can be near zero; a floor of 1% of the median
  // keeps every sample within 5% of it, so only real outliers go.
  const double scale = std::max(1.4826 * MedianOf(std::move(deviations)), 0.01 * median);
  std::vector<double> kept;
  for (double x : samples) {
    if (scale == 0 ? x == median : std::abs(x - median) <= k * scale) kept.push_back(x);
  }
  return kept;
}

}  // namespace crest::measure
