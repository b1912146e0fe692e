#include "crest/measure/study_race.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "crest/common/str_cat.h"

namespace crest::measure {
namespace {

// Student's t, two-sided 95%, by degrees of freedom (1–30; 1.96 beyond).
double T975(int df) {
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  return df <= 30 ? kT[df - 1] : 1.96;
}

// The paired log ratios of a over b in the rounds both were timed in.
std::vector<double> LogRatios(const std::vector<std::vector<double>>& times, int a, int b) {
  std::vector<double> out;
  for (const auto& round : times) {
    const double ta = round[static_cast<size_t>(a)];
    const double tb = round[static_cast<size_t>(b)];
    if (ta > 0 && tb > 0) out.push_back(std::log(ta / tb));
  }
  return out;
}

struct Ratio {
  double mean = 0;  // of the log ratios
  double low = 0;
  double high = 0;
  int n = 0;
};

Ratio Paired(const std::vector<std::vector<double>>& times, int a, int b) {
  const std::vector<double> r = LogRatios(times, a, b);
  Ratio out;
  out.n = static_cast<int>(r.size());
  if (r.empty()) return out;
  const double n = static_cast<double>(r.size());
  out.mean = std::accumulate(r.begin(), r.end(), 0.0) / n;
  double ss = 0;
  for (double x : r) ss += (x - out.mean) * (x - out.mean);
  const double half = r.size() > 1 ? T975(out.n - 1) * std::sqrt(ss / (n - 1) / n) : INFINITY;
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

// A candidate's own times, in the rounds it was timed in.
std::vector<double> TimesOf(const std::vector<std::vector<double>>& times, int c) {
  std::vector<double> out;
  for (const auto& round : times) {
    if (const double t = round[static_cast<size_t>(c)]; t > 0) out.push_back(t);
  }
  return out;
}

double MeanLog(const std::vector<std::vector<double>>& times, int c) {
  const std::vector<double> own = TimesOf(times, c);
  double sum = 0;
  for (double t : own) sum += std::log(t);
  return own.empty() ? INFINITY : sum / static_cast<double>(own.size());
}

// The leader: the least geometric-mean time among the candidates timed in
// the last round (those still racing), else among all.
int Leader(const std::vector<std::vector<double>>& times, const std::vector<bool>& racing) {
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

RaceVerdict Judge(const Ratio& r, double resolution) {
  if (r.low > 0) return RaceVerdict::kSlower;
  if (r.low >= std::log1p(-resolution) && r.high <= std::log1p(resolution)) return RaceVerdict::kTied;
  return RaceVerdict::kUnresolved;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Standings from the rounds: verdicts against the leader, then tie groups
// (group 1: the leader, the tied and the unresolved; each slower candidate
// joins the group before it when their own paired interval reaches 1).
std::vector<RaceStanding> Standings(const std::vector<std::vector<double>>& times,
                                    const std::vector<RaceVerdict>& verdicts, int leader) {
  std::vector<RaceStanding> out;
  for (int c = 0; c < static_cast<int>(verdicts.size()); ++c) {
    RaceStanding s;
    s.candidate = c;
    s.verdict = c == leader ? RaceVerdict::kLeader : verdicts[static_cast<size_t>(c)];
    const Ratio r = Paired(times, c, leader);
    std::vector<double> own = TimesOf(times, c);
    s.rounds = static_cast<int>(own.size());
    s.ratio = std::exp(r.mean);
    s.ratio_low = c == leader ? 1 : std::exp(r.low);
    s.ratio_high = c == leader ? 1 : std::exp(r.high);
    s.median_us = Median(std::move(own));
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const RaceStanding& a, const RaceStanding& b) {
    const bool a_first = a.verdict != RaceVerdict::kSlower;
    const bool b_first = b.verdict != RaceVerdict::kSlower;
    if (a_first != b_first) return a_first;
    if ((a.verdict == RaceVerdict::kLeader) != (b.verdict == RaceVerdict::kLeader)) {
      return a.verdict == RaceVerdict::kLeader;
    }
    return a.ratio < b.ratio;
  });
  int group = 1;
  int head = out.front().candidate;
  for (RaceStanding& s : out) {
    if (s.verdict != RaceVerdict::kSlower) {
      s.tie_group = 1;
      continue;
    }
    const Ratio against_head = Paired(times, s.candidate, head);
    if (head == leader || against_head.low > 0) {
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
  if (o.min_rounds < 2 || o.max_rounds < o.min_rounds || o.max_rounds > 100000) {
    return absl::InvalidArgumentError("race.rounds: need 2 <= min_rounds <= max_rounds <= 100000");
  }
  if (!(o.max_seconds > 0) || !(o.max_idle_gap_s > 0)) {
    return absl::InvalidArgumentError("race: max_seconds and max_idle_gap_s must be positive");
  }
  return absl::OkStatus();
}

// Untimed rounds until the GPU has settled under the candidates' load.
absl::Status WarmUp(CandidateTimer& timer, GpuMonitor& monitor, EngineClock& clock,
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
  return absl::OkStatus();
}

}  // namespace

std::string_view RaceVerdictName(RaceVerdict verdict) {
  switch (verdict) {
    case RaceVerdict::kLeader: return "leader";
    case RaceVerdict::kSlower: return "slower";
    case RaceVerdict::kTied: return "tied";
    case RaceVerdict::kUnresolved: return "unresolved";
  }
  return "unresolved";
}

absl::StatusOr<StudyRaceResult> RaceCandidates(CandidateTimer& timer, GpuMonitor& monitor,
                                               EngineClock& clock,
                                               const StudyRaceOptions& options) {
  const int n = timer.Candidates();
  if (auto s = CheckOptions(options, n); !s.ok()) return s;
  StudyRaceResult result;
  const double began = clock.NowS();
  if (auto s = WarmUp(timer, monitor, clock, options.settle, result); !s.ok()) return s;
  std::vector<bool> racing(static_cast<size_t>(n), true);
  std::vector<RaceVerdict> verdicts(static_cast<size_t>(n), RaceVerdict::kUnresolved);
  const double start = clock.NowS();
  double last_end = -1;
  int leader = 0;
  while (true) {
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
        t = timer.Time(c);
      }
      if (!t.ok()) return t.status();
      last_end = clock.NowS();
      round[static_cast<size_t>(c)] = *t;
    }
    result.times.push_back(std::move(round));
    ++result.rounds;
    leader = Leader(result.times, racing);
    bool undecided = false;
    if (result.rounds >= options.min_rounds) {
      for (int c = 0; c < n; ++c) {
        if (c == leader || !racing[static_cast<size_t>(c)]) continue;
        verdicts[static_cast<size_t>(c)] = Judge(Paired(result.times, c, leader), options.resolution);
        if (verdicts[static_cast<size_t>(c)] == RaceVerdict::kSlower) racing[static_cast<size_t>(c)] = false;
        undecided = undecided || verdicts[static_cast<size_t>(c)] == RaceVerdict::kUnresolved;
      }
    }
    const bool judged = result.rounds >= options.min_rounds;
    if (judged && !undecided) {
      result.stop_reason = "resolved";
    } else if (result.rounds >= options.max_rounds) {
      result.stop_reason = "round budget";
    } else if (clock.NowS() - start >= options.max_seconds) {
      result.stop_reason = "time budget";
    }
    if (!result.stop_reason.empty()) break;
  }
  result.seconds = clock.NowS() - began;
  result.standings = Standings(result.times, verdicts, leader);
  return result;
}

}  // namespace crest::measure
