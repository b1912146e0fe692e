// Benchmarks only: latency percentiles of a run's samples.
#pragma once

#include <algorithm>
#include <vector>

namespace crest::bench {

struct Percentiles {
  double p50_us, p99_us, max_us;
};

// `us` must not be empty.
inline Percentiles Summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) {
    return us[static_cast<size_t>(q * static_cast<double>(us.size() - 1))];
  };
  return {at(0.5), at(0.99), us.back()};
}

}  // namespace crest::bench
