// One candidate's standing in the race of a d_ff study's leading candidates
// (the study race, measure/study_race.h): what the engine decides, what the
// store keeps (race_entries) and what a d_ff answer orders its rows by
// (ApplyRace). One type from the race to the answer's row.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace crest::tuner {

enum class RaceVerdict {
  kLeader,      // the fastest (least geometric-mean time)
  kSlower,      // its ratio's interval to some candidate lies wholly above 1 + resolution
  kTied,        // its ratio's interval to the leader lies within 1 ± resolution
  kUnresolved,  // neither when the race ended: tied with the leader, undecided
};
std::string_view RaceVerdictName(RaceVerdict verdict);  // "leader", "slower", …
// The verdict of a name RaceVerdictName gives; nullopt for any other word.
std::optional<RaceVerdict> ParseRaceVerdict(std::string_view name);

struct RaceStanding {
  int candidate = 0;  // its index in the race (the order it was entered in)
  int64_t value = 0;  // what it is in the study (a d_ff); 0 until the study names it
  RaceVerdict verdict = RaceVerdict::kUnresolved;
  int tie_group = 0;     // 1: the leader and every candidate it cannot be told from
  int rounds = 0;        // rounds this candidate was timed in
  double median_us = 0;  // of its own times
  double ratio = 1;      // geometric mean of its paired ratios to the leader
  double ratio_low = 1;  // their simultaneous interval (measure::kRaceErrorRate)
  double ratio_high = 1;
};

}  // namespace crest::tuner
