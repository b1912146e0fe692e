#include "crest/tuner/race_standing.h"

#include "crest/common/name_table.h"

namespace crest::tuner {
namespace {

constexpr NameTable<RaceVerdict, 4> kVerdicts = {{{RaceVerdict::kLeader, "leader"},
                                                  {RaceVerdict::kSlower, "slower"},
                                                  {RaceVerdict::kTied, "tied"},
                                                  {RaceVerdict::kUnresolved, "unresolved"}}};

}  // namespace

std::string_view RaceVerdictName(RaceVerdict verdict) { return NameOf(kVerdicts, verdict); }

std::optional<RaceVerdict> ParseRaceVerdict(std::string_view name) {
  return ValueNamed(kVerdicts, name);
}

}  // namespace crest::tuner
