// The leading candidates of a study raced against each other: each round
// times every candidate still undecided once (a d_ff candidate: its whole
// MLP, every GEMM), in an order rotated round by round, so that drift in the
// GPU's clock and power falls on all of them alike. A candidate is judged by
// its paired ratios to the leader (its time over the leader's in the same
// round): a 95% interval of their geometric mean wholly above 1 resolves it
// as slower (it leaves the race); one wholly within 1 ± resolution resolves
// it as tied with the leader. The race stops when every candidate is
// resolved, or when its budget (rounds, seconds) is spent: the rest are
// declared tied with the leader because the budget could not order them.
// A candidate timed after the GPU idled longer than max_idle_gap_s (a pause
// between timings, or host work inside one: its wall time beyond the time
// it returned) is timed again at once, the GPU now loaded, and the first
// time is dropped: a cooled GPU runs its first kernels fast.
//
// Before the first round the candidates run round-robin, untimed, until the
// GPU's power and clock have settled under their load (clock_policy.h's
// SettleDetector on the monitor's readings; at most settle.max_s): rounds
// taken while a rested GPU falls from boost to its power cap would weigh
// each candidate by where in that fall it ran.
//
// Logic only: the caller times candidates (CandidateTimer) on a device or,
// in tests, on a scripted GPU replaying a recorded clock trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/clock_policy.h"
#include "crest/measure/launcher.h"

namespace crest::measure {

class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  virtual int Candidates() const = 0;
  // Times candidate `c` once, all its GEMMs [µs].
  virtual absl::StatusOr<double> Time(int c) = 0;
};

struct StudyRaceOptions {
  double resolution = 0.01;      // tied when the ratio's interval lies within 1 ± this
  int min_rounds = 5;            // rounds before any candidate is judged
  int max_rounds = 200;          // the budget, in rounds…
  double max_seconds = 60;       // …and in seconds on the engine's clock
  double max_idle_gap_s = 0.05;  // a longer gap before a timing retakes it
  SettleOptions settle;          // the warm-up before the first round
};

enum class RaceVerdict {
  kLeader,      // the fastest (least geometric-mean time)
  kSlower,      // its ratio's interval lies wholly above 1
  kTied,        // its ratio's interval lies within 1 ± resolution
  kUnresolved,  // the budget ran out first: tied with the leader, undecided
};
std::string_view RaceVerdictName(RaceVerdict verdict);  // "leader", "slower", …

struct RaceStanding {
  int candidate = 0;
  RaceVerdict verdict = RaceVerdict::kUnresolved;
  int tie_group = 0;       // 1: the leader and every candidate it cannot be told from
  int rounds = 0;          // rounds this candidate was timed in
  double median_us = 0;    // of its own times
  double ratio = 1;        // geometric mean of its paired ratios to the leader
  double ratio_low = 1;    // their 95% interval
  double ratio_high = 1;
};

struct StudyRaceResult {
  std::vector<RaceStanding> standings;  // leader first, then by ratio
  std::vector<std::vector<double>> times;  // [round][candidate] µs; 0 = not timed that round
  int rounds = 0;
  int retaken = 0;          // timings dropped for an idle gap before them
  double warmup_s = 0;      // untimed load before the first round
  bool settled = false;     // false: the warm-up reached settle.max_s unsettled
  double seconds = 0;       // on the engine's clock, warm-up included
  std::string stop_reason;  // "resolved", "round budget", "time budget"
};

// Races the timer's candidates. InvalidArgument for fewer than 2 candidates
// or options out of range; a timer's error ends the race with it.
absl::StatusOr<StudyRaceResult> RaceCandidates(CandidateTimer& timer, GpuMonitor& monitor,
                                               EngineClock& clock,
                                               const StudyRaceOptions& options = {});

}  // namespace crest::measure
