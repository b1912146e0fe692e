// Internal to crest::measure: the judgement of a study race (study_race.h).
//
// The rounds' paired log ratios give, for every pair of candidates, an
// interval of their geometric-mean ratio. All pairs at all looks are one
// family: each interval is a Student-t interval at level
// 1 − error_rate / (looks · pairs) (Bonferroni over the unordered pairs and
// the looks a race can take), so with probability at least 1 − error_rate
// every interval the race ever computes covers its true ratio at once, and
// on that event every verdict is right. Verdicts:
//   slower — its interval against some candidate lies wholly above
//            1 + resolution;
//   tied   — its interval against the leader lies within 1 ± resolution;
//   unresolved — neither.
// So a race calls any candidate wrongly slower or tied at most error_rate of
// the time, whatever the number of candidates and rounds, provided the paired
// log ratios of a pair are independent and near-normal from round to round
// (rotating the order within a round makes drift fall on all alike).
#pragma once

#include <cstddef>
#include <map>
#include <vector>

namespace crest::measure::internal {

// Rounds at which a race judges: min_rounds, then each ~1.25× the last, and
// max_rounds; a race ended by its time budget judges once more where it
// stopped, so a race takes at most Looks(...).size() + 1 looks.
std::vector<int> LookRounds(int min_rounds, int max_rounds);

struct PairedRatio {
  double mean = 0;  // of the log ratios
  double low = 0;   // the simultaneous interval (log)
  double high = 0;
  int n = 0;  // rounds both were timed in
};

class RaceJudge {
 public:
  // `candidates` ≥ 2; error_rate in (0, 1); looks ≥ 1.
  RaceJudge(int candidates, double error_rate, int looks, double resolution);

  // Candidate a's time over b's, from the rounds both were timed in.
  PairedRatio Paired(const std::vector<std::vector<double>>& times, int a, int b) const;
  // True when the pair's interval lies wholly above 1 + resolution.
  bool Slower(const PairedRatio& r) const;
  // True when the pair's interval lies within 1 ± resolution.
  bool Tied(const PairedRatio& r) const;
  // True when the interval is narrower than the resolution: more rounds
  // would move it by less than the race can tell.
  bool Precise(const PairedRatio& r) const;
  // The two-sided critical value for `n` paired rounds.
  double Critical(int n) const;

 private:
  double tail_ = 0;  // per side, per interval
  double log_up_ = 0;
  double log_down_ = 0;
  mutable std::map<int, double> critical_;
};

}  // namespace crest::measure::internal
