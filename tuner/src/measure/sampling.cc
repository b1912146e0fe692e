#include "crest/tuner/measure/sampling.h"

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

SampleStats Summarize(std::span<const double> samples, std::span<const double> clocks) {
  SampleStats s;
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
  if (!clocks.empty()) s.sm_clock_mhz = MedianOf({clocks.begin(), clocks.end()});
  return s;
}

std::vector<double> RejectOutliers(std::span<const double> samples, double k) {
  if (samples.size() < 4) return {samples.begin(), samples.end()};
  const double median = MedianOf({samples.begin(), samples.end()});
  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::abs(x - median));
  // 1.4826·MAD estimates the standard deviation of normal noise.
  const double scale = 1.4826 * MedianOf(std::move(deviations));
  std::vector<double> kept;
  for (double x : samples) {
    if (scale == 0 ? x == median : std::abs(x - median) <= k * scale) kept.push_back(x);
  }
  return kept;
}

void StoppingRule::Add(double sample_us) {
  samples_.push_back(sample_us);
  sum_ += sample_us;
  sum_sq_ += sample_us * sample_us;
}

double StoppingRule::RelativeNoise() const {
  const auto n = static_cast<double>(samples_.size());
  if (n < 2) return INFINITY;
  const double mean = sum_ / n;
  const double var = std::max(0.0, (sum_sq_ - n * mean * mean) / (n - 1));
  return mean > 0 ? std::sqrt(var) / mean : INFINITY;
}

bool StoppingRule::Converged() const {
  return count() >= options_.min_samples && RelativeNoise() <= options_.max_relative_noise;
}

bool StoppingRule::Finished(double elapsed_s) const {
  return Converged() || count() >= options_.max_samples || elapsed_s >= options_.max_seconds;
}

}  // namespace crest::measure
