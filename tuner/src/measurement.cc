#include "crest/tuner/measurement.h"

namespace crest {

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

}  // namespace crest
