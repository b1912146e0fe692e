// The device-free parts of a measurement: summarising samples, rejecting
// outliers, discarding throttled samples and deciding when to stop. Each is
// fed plain numbers, so tests script timings without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "crest/tuner/measurement.h"

namespace crest::measure {

// The median of `values`; 0 for none.
double Median(std::span<const double> values);

// Median, mean, min, stdev [µs] and count of `samples_us`; sm_clock_mhz is
// the median of `clocks_mhz` when given. Empty input gives zeros.
SampleStats Summarize(std::span<const double> samples_us, std::span<const double> clocks_mhz = {});

// Samples further than `k` scaled median absolute deviations from the median
// (k = 5 by default) are outliers: a preempted launch or a stray context
// switch, not the kernel. Returns the kept samples, in input order.
std::vector<double> RejectOutliers(std::span<const double> samples_us, double k = 5.0);

// Discards samples taken while the SM clock ran below (1 - tolerance) of
// the running clock reached after warm-up.
class ThrottleFilter final {
 public:
  explicit ThrottleFilter(double running_clock_mhz, double tolerance = 0.03)
      : reference_mhz_(running_clock_mhz), tolerance_(tolerance) {}
  // True when a sample at this clock is kept. A clock of 0 means "unknown"
  // (no NVML): kept.
  bool Keep(double clock_mhz) const {
    return clock_mhz <= 0 || reference_mhz_ <= 0 || clock_mhz >= (1 - tolerance_) * reference_mhz_;
  }
  double reference_mhz() const { return reference_mhz_; }

 private:
  double reference_mhz_;
  double tolerance_;
};

struct StoppingOptions {
  int64_t min_samples = 10;
  int64_t max_samples = 2000;
  double max_relative_noise = 0.01;  // stdev / mean of the kept samples
  double max_seconds = 2.0;          // per algorithm, wall time
};

// Keeps sampling until the relative noise of the kept samples is under the
// bound (after at least min_samples), or max_samples, or max_seconds.
class StoppingRule final {
 public:
  explicit StoppingRule(StoppingOptions options) : options_(options) {}
  void Add(double sample_us);
  bool Finished(double elapsed_s) const;
  bool Converged() const;  // noise under the bound with enough samples
  double RelativeNoise() const;
  int64_t count() const { return static_cast<int64_t>(samples_.size()); }
  const std::vector<double>& samples() const { return samples_; }

 private:
  StoppingOptions options_;
  std::vector<double> samples_;
  double sum_ = 0;
  double sum_sq_ = 0;
};

}  // namespace crest::measure
