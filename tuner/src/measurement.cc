#include "crest/tuner/measurement.h"

#include <cmath>
#include <tuple>

#include "crest/common/str_cat.h"

namespace crest::tuner {

std::string_view CacheModeName(CacheMode mode) {
  return mode == CacheMode::kWarm ? "warm" : "cold";
}

std::optional<CacheMode> ParseCacheMode(std::string_view text) {
  if (text == "cold") return CacheMode::kCold;
  if (text == "warm") return CacheMode::kWarm;
  return std::nullopt;
}

std::string_view ClockPolicyName(ClockPolicy policy) {
  return policy == ClockPolicy::kBurst ? "burst" : "sustained";
}

std::optional<ClockPolicy> ParseClockPolicy(std::string_view text) {
  if (text == "sustained") return ClockPolicy::kSustained;
  if (text == "burst") return ClockPolicy::kBurst;
  return std::nullopt;
}

std::string_view AlgoChoiceName(AlgoChoice choice) {
  return choice == AlgoChoice::kDefault ? "default" : "best";
}

std::optional<AlgoChoice> ParseAlgoChoice(std::string_view text) {
  if (text == "best") return AlgoChoice::kBest;
  if (text == "default") return AlgoChoice::kDefault;
  return std::nullopt;
}

namespace {

// Mass of X = i for X ~ Binomial(n, 1/2), in log space (no overflow).
double BinomialMass(int64_t n, int64_t i) {
  return std::exp(
      std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
      std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0));
}

}  // namespace

MedianOrderInterval MedianIntervalOf(int64_t n) { return MedianIntervalOf(n, 0.95); }

MedianOrderInterval MedianIntervalOf(int64_t n, double confidence) {
  if (n <= 0) return {};
  const double tail = (1 - confidence) / 2;
  int64_t l = 1;
  double below = BinomialMass(n, 0);  // P(X < l)
  while (l + 1 <= (n + 1) / 2) {
    const double next = below + BinomialMass(n, l);  // P(X < l + 1)
    if (next > tail) break;
    below = next;
    ++l;
  }
  return {l, std::max(0.0, 1 - 2 * below)};
}

double MedianIntervalCoverage(int64_t samples) { return MedianIntervalOf(samples).coverage; }

std::string CoverageText(int64_t samples) {
  const double c = MedianIntervalCoverage(samples);
  if (c >= 0.95) return "95%";
  return StrCat(Decimals(100 * c, 2), "%");
}

bool SameConfiguration(const AlgoIdentity& a, const AlgoIdentity& b) {
  const auto config = [](const AlgoIdentity& x) {
    return std::tuple(x.algo_id, x.tile, x.stages, x.split_k, x.reduction_scheme, x.swizzle,
                      x.custom_option, x.cluster_shape);
  };
  return config(a) == config(b);
}

}  // namespace crest::tuner
