// The leading candidates of a study raced against each other: each round
// times every candidate still undecided once (a d_ff candidate: its whole
// MLP, every GEMM), in an order rotated round by round, so that drift in the
// GPU's clock and power falls on all of them alike. Candidates are judged by
// their paired ratios (one's time over another's in the same round).
//
// Verdicts hold at a stated error rate (kRaceErrorRate, family-wise): every
// pair's interval of its geometric-mean ratio is a Student-t interval at
// level 1 − kRaceErrorRate / (looks · pairs), Bonferroni over every pair of
// candidates and every round at which the race may judge (the looks: from
// min_rounds, each ~1.25× the last, and max_rounds, and once more where a
// time budget stops it). With probability at least 95% all of those
// intervals cover their true ratios at once, so the race calls a candidate
// wrongly "slower" or "tied" at most 5% of the time, whatever the number of
// candidates or rounds. A candidate is
//   slower — its interval against some candidate lies wholly above
//            1 + resolution (it leaves the race; elimination is permanent);
//   tied   — its interval against the leader lies within 1 ± resolution;
//   unresolved — neither, when the race ends.
// The race stops when every candidate is slower or tied ("resolved"), when
// every undecided one's interval is narrower than the resolution (more
// rounds could not decide it: "resolution reached"), or when its budget
// (rounds, seconds) is spent. Unresolved candidates stay in the leader's tie
// group: the race could not order them. The assumption under the rate:
// a pair's paired log ratios are independent and near-normal from round to
// round (docs/measurement.md).
//
// A candidate timed after the GPU idled longer than max_idle_gap_s (a pause
// between timings, or host work inside one: its wall time beyond the time
// it returned) is timed again after a reload: untimed timings until the
// GPU's clock AND power (NVML's one-second average) are back at the state
// the warm-up settled in (AtLoad, at most settle.max_s); the first time is
// dropped. A cooled GPU runs its first kernels fast, and its clock returns
// before its averaged power says the load is back.
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
#include "crest/tuner/race_standing.h"

namespace crest::measure {

class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  virtual int Candidates() const = 0;
  // Times candidate `c` once, all its GEMMs [µs].
  virtual absl::StatusOr<double> Time(int c) = 0;
};

// The family-wise error rate of a race's verdicts ("slower" and "tied").
inline constexpr double kRaceErrorRate = 0.05;

struct StudyRaceOptions {
  double resolution = 0.01;      // tied within 1 ± this; slower beyond 1 + this
  int min_rounds = 5;            // rounds before any candidate is judged
  int max_rounds = 200;          // the budget, in rounds…
  double max_seconds = 60;       // …and in seconds on the engine's clock
  double max_idle_gap_s = 0.05;  // a longer gap before a timing retakes it
  SettleOptions settle;          // the warm-up before the first round
};

struct StudyRaceResult {
  std::vector<tuner::RaceStanding> standings;  // leader first, then by ratio; value left 0
  std::vector<std::vector<double>> times;      // [round][candidate] µs; 0 = not timed that round
  int rounds = 0;
  int retaken = 0;       // timings dropped for an idle gap before them
  double reload_s = 0;   // untimed load before the retakes
  int unloaded = 0;      // retakes whose reload hit settle.max_s short of the load
  double warmup_s = 0;   // untimed load before the first round
  bool settled = false;  // false: the warm-up reached settle.max_s unsettled
  double seconds = 0;    // on the engine's clock, warm-up included
  // "resolved", "resolution reached", "round budget", "time budget"; with
  // "; N retake(s) after a reload that ran … without … the settled load"
  // appended when a reload ran out (unloaded > 0).
  std::string stop_reason;
};

// Races the timer's candidates. InvalidArgument for fewer than 2 candidates
// or options out of range; a timer's error ends the race with it.
absl::StatusOr<StudyRaceResult> RaceCandidates(CandidateTimer& timer, GpuMonitor& monitor,
                                               EngineClock& clock,
                                               const StudyRaceOptions& options = {});

}  // namespace crest::measure
