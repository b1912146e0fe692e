#include "crest/measure/study_race.h"

#include <algorithm>
#include <cmath>

#include "crest/common/str_cat.h"
#include "race_verdicts.h"

namespace crest::measure {
namespace {

using internal::PairedRatio;
using internal::RaceJudge;

using Rounds = std::vector<std::vector<double>>;

// A candidate's own times, in the rounds it was timed in.
std::vector<double> TimesOf(const Rounds& times, int c) {
  std::vector<double> out;
  for (const auto& round : times) {
    if (const double t = round[static_cast<size_t>(c)]; t > 0) out.push_back(t);
  }
  return out;
}

double MeanLog(const Rounds& times, int c) {
  const std::vector<double> own = TimesOf(times, c);
  double sum = 0;
  for (double t : own) sum += std::log(t);
  return own.empty() ? INFINITY : sum / static_cast<double>(own.size());
}

// The leader: the least geometric-mean time among the candidates still racing.
int Leader(const Rounds& times, const std::vector<bool>& racing) {
  int best = -1;
  double best_log = INFINITY;
  for (int c = 0; c < static_cast<int>(racing.size()); ++c) {
    if (!racing[static_cast<size_t>(c)]) continue;
    if (const double m = MeanLog(times, c); m < best_log) {
      best_log = m;
      best = c;
    }
  }
  return best;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Slower than some candidate beyond the resolution, at the family's level
// (`against_leader`: its pair with the leader, already computed).
bool SlowerThanAny(const RaceJudge& judge, const Rounds& times, int c, int leader,
                   const PairedRatio& against_leader) {
  if (judge.Slower(against_leader)) return true;
  const int n = static_cast<int>(times.front().size());
  for (int d = 0; d < n; ++d) {
    if (d != c && d != leader && judge.Slower(judge.Paired(times, c, d))) return true;
  }
  return false;
}

// Standings from the rounds: verdicts against the leader, then tie groups
// (group 1: the leader, the tied and the unresolved; each slower candidate
// opens a new group unless its interval against the group's head reaches
// 1 + resolution).
std::vector<tuner::RaceStanding> Standings(const RaceJudge& judge, const Rounds& times,
                                           const std::vector<tuner::RaceVerdict>& verdicts,
                                           int leader) {
  std::vector<tuner::RaceStanding> out;
  for (int c = 0; c < static_cast<int>(verdicts.size()); ++c) {
    tuner::RaceStanding s;
    s.candidate = c;
    s.verdict = c == leader ? tuner::RaceVerdict::kLeader : verdicts[static_cast<size_t>(c)];
    const PairedRatio r = judge.Paired(times, c, leader);
    std::vector<double> own = TimesOf(times, c);
    s.rounds = static_cast<int>(own.size());
    s.ratio = std::exp(r.mean);
    s.ratio_low = c == leader ? 1 : std::exp(r.low);
    s.ratio_high = c == leader ? 1 : std::exp(r.high);
    s.median_us = Median(std::move(own));
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const tuner::RaceStanding& a, const tuner::RaceStanding& b) {
                     const bool a_first = a.verdict != tuner::RaceVerdict::kSlower;
                     const bool b_first = b.verdict != tuner::RaceVerdict::kSlower;
                     if (a_first != b_first) return a_first;
                     if ((a.verdict == tuner::RaceVerdict::kLeader) !=
                         (b.verdict == tuner::RaceVerdict::kLeader)) {
                       return a.verdict == tuner::RaceVerdict::kLeader;
                     }
                     return a.ratio < b.ratio;
                   });
  int group = 1;
  int head = out.front().candidate;
  for (tuner::RaceStanding& s : out) {
    if (s.verdict != tuner::RaceVerdict::kSlower) {
      s.tie_group = 1;
      continue;
    }
    if (head == leader || judge.Slower(judge.Paired(times, s.candidate, head))) {
      ++group;
      head = s.candidate;
    }
    s.tie_group = group;
  }
  return out;
}

absl::Status CheckOptions(const StudyRaceOptions& o, int candidates) {
  if (candidates < 2) {
    return absl::InvalidArgumentError(StrCat("race: ", candidates, " candidates; at least 2"));
  }
  if (!(o.resolution > 0 && o.resolution < 0.5)) {
    return absl::InvalidArgumentError("race.resolution: must be in (0, 0.5)");
  }
  if (o.min_rounds < 3 || o.max_rounds < o.min_rounds || o.max_rounds > 100000) {
    return absl::InvalidArgumentError("race.rounds: need 3 <= min_rounds <= max_rounds <= 100000");
  }
  if (!(o.max_seconds > 0) || !(o.max_idle_gap_s > 0)) {
    return absl::InvalidArgumentError("race: max_seconds and max_idle_gap_s must be positive");
  }
  return absl::OkStatus();
}

// Untimed rounds until the GPU has settled under the candidates' load;
// returns the settled state (medians of the last window).
absl::StatusOr<GpuReading> WarmUp(CandidateTimer& timer, GpuMonitor& monitor, EngineClock& clock,
                                  const SettleOptions& settle, StudyRaceResult& result) {
  SettleDetector detector(settle);
  const double start = clock.NowS();
  for (int c = 0;; c = (c + 1) % timer.Candidates()) {
    GpuReading r = monitor.Read();
    r.time_s = clock.NowS() - start;
    detector.Add(r);
    if (detector.Settled() || detector.TimedOut()) break;
    if (auto t = timer.Time(c); !t.ok()) return t.status();
  }
  result.settled = detector.Settled();
  result.warmup_s = clock.NowS() - start;
  GpuReading settled;
  settled.sm_clock_mhz = detector.ClockMhz();
  settled.power_w = detector.PowerW();
  return settled;
}

// Untimed timings of `c` until the GPU is back at its settled load (clock
// and averaged power), at most settle.max_s.
absl::Status Reload(CandidateTimer& timer, int c, GpuMonitor& monitor, EngineClock& clock,
                    const GpuReading& settled, const SettleOptions& settle,
                    StudyRaceResult& result) {
  const double start = clock.NowS();
  bool back = false;
  while (!back && clock.NowS() - start < settle.max_s) {
    if (auto t = timer.Time(c); !t.ok()) return t.status();
    back = AtLoad(monitor.Read(), settled, settle.clock_tolerance);
  }
  result.reload_s += clock.NowS() - start;
  if (!back) ++result.unloaded;
  return absl::OkStatus();
}

// One round: every candidate still racing, once, in rotated order; a timing
// after an idle gap is retaken after a reload.
absl::StatusOr<std::vector<double>> Round(CandidateTimer& timer, GpuMonitor& monitor,
                                          EngineClock& clock, const StudyRaceOptions& options,
                                          const GpuReading& settled,
                                          const std::vector<bool>& racing, double& last_end,
                                          StudyRaceResult& result) {
  const int n = timer.Candidates();
  std::vector<double> round(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const int c = (i + result.rounds) % n;  // rotated each round
    if (!racing[static_cast<size_t>(c)]) continue;
    // Idle before this timing: a gap since the last one ended, or host
    // work inside the timer before its kernels (its wall time beyond them).
    const double called = clock.NowS();
    const bool gap = last_end >= 0 && called - last_end > options.max_idle_gap_s;
    auto t = timer.Time(c);
    const bool idled = gap || (t.ok() && clock.NowS() - called - *t / 1e6 > options.max_idle_gap_s);
    if (t.ok() && idled) {
      ++result.retaken;
      if (auto s = Reload(timer, c, monitor, clock, settled, options.settle, result); !s.ok())
        return s;
      t = timer.Time(c);
    }
    if (!t.ok()) return t.status();
    last_end = clock.NowS();
    round[static_cast<size_t>(c)] = *t;
  }
  return round;
}

// Judges every candidate still racing against the family's intervals;
// returns whether any is undecided and every undecided one is precise.
struct Judgement {
  bool undecided = false;
  bool all_precise = true;
};
Judgement JudgeRound(const RaceJudge& judge, const Rounds& times, int leader,
                     std::vector<bool>& racing, std::vector<tuner::RaceVerdict>& verdicts) {
  Judgement out;
  for (int c = 0; c < static_cast<int>(racing.size()); ++c) {
    const auto k = static_cast<size_t>(c);
    if (c == leader || !racing[k]) continue;
    const PairedRatio against_leader = judge.Paired(times, c, leader);
    if (SlowerThanAny(judge, times, c, leader, against_leader)) {
      verdicts[k] = tuner::RaceVerdict::kSlower;
      racing[k] = false;
    } else if (judge.Tied(against_leader)) {
      verdicts[k] = tuner::RaceVerdict::kTied;
    } else {
      verdicts[k] = tuner::RaceVerdict::kUnresolved;
      out.undecided = true;
      out.all_precise = out.all_precise && judge.Precise(against_leader);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<StudyRaceResult> RaceCandidates(CandidateTimer& timer, GpuMonitor& monitor,
                                               EngineClock& clock,
                                               const StudyRaceOptions& options) {
  const int n = timer.Candidates();
  if (auto s = CheckOptions(options, n); !s.ok()) return s;
  const std::vector<int> looks = internal::LookRounds(options.min_rounds, options.max_rounds);
  const RaceJudge judge(n, kRaceErrorRate, static_cast<int>(looks.size()) + 1, options.resolution);
  StudyRaceResult result;
  const double began = clock.NowS();
  auto settled = WarmUp(timer, monitor, clock, options.settle, result);
  if (!settled.ok()) return settled.status();
  std::vector<bool> racing(static_cast<size_t>(n), true);
  std::vector<tuner::RaceVerdict> verdicts(static_cast<size_t>(n), tuner::RaceVerdict::kUnresolved);
  const double start = clock.NowS();
  double last_end = -1;
  int leader = 0;
  size_t next_look = 0;
  while (result.stop_reason.empty()) {
    auto round = Round(timer, monitor, clock, options, *settled, racing, last_end, result);
    if (!round.ok()) return round.status();
    result.times.push_back(*std::move(round));
    ++result.rounds;
    const bool out_of_time = clock.NowS() - start >= options.max_seconds;
    const bool look = next_look < looks.size() && result.rounds == looks[next_look];
    if (!look && !out_of_time) continue;
    if (look) ++next_look;
    leader = Leader(result.times, racing);
    const Judgement j = JudgeRound(judge, result.times, leader, racing, verdicts);
    if (!j.undecided) {
      result.stop_reason = "resolved";
    } else if (j.all_precise) {
      result.stop_reason = "resolution reached";
    } else if (result.rounds >= options.max_rounds) {
      result.stop_reason = "round budget";
    } else if (out_of_time) {
      result.stop_reason = "time budget";
    }
  }
  result.seconds = clock.NowS() - began;
  if (result.unloaded > 0) {
    // Stored and printed with the race: its kept retakes may not be the
    // loaded GPU's.
    result.stop_reason +=
        StrCat("; ", result.unloaded, " retake(s) after a reload that ran ", options.settle.max_s,
               " s without the clock and power back at "
               "the settled load");
  }
  result.standings = Standings(judge, result.times, verdicts, leader);
  return result;
}

}  // namespace crest::measure
