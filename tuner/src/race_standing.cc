#include "crest/tuner/race_standing.h"

namespace crest {

std::string_view RaceVerdictName(RaceVerdict verdict) {
  switch (verdict) {
    case RaceVerdict::kLeader:
      return "leader";
    case RaceVerdict::kSlower:
      return "slower";
    case RaceVerdict::kTied:
      return "tied";
    case RaceVerdict::kUnresolved:
      return "unresolved";
  }
  return "unresolved";
}

std::optional<RaceVerdict> ParseRaceVerdict(std::string_view name) {
  for (RaceVerdict v :
       {RaceVerdict::kLeader, RaceVerdict::kSlower, RaceVerdict::kTied, RaceVerdict::kUnresolved}) {
    if (RaceVerdictName(v) == name) return v;
  }
  return std::nullopt;
}

}  // namespace crest
