// The study race's verdicts over thousands of simulated races: how often it
// calls equal candidates "slower" (its stated family-wise error rate is
// kRaceErrorRate, 5%), and how often it orders unequal ones correctly within
// its budget. Each race runs the real RaceCandidates on a simulated GPU: a
// candidate's time is its true time × the recorded H100 trace's drift (the
// power-capped SM clock under sustained load, 1395–1515 MHz, replayed as the
// simulated time advances, from a random place in the trace) × independent
// Gaussian noise. Simulated figures, not a GPU's.
// Usage: race_bench TRACE_CSV [--races N] (default 1000 a case; 32-candidate
// cases run N/4).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "crest/measure/simulated_gpu.h"
#include "crest/measure/study_race.h"

namespace {

using namespace crest::measure;  // NOLINT(build/namespaces): a benchmark's main file
using crest::tuner::RaceVerdict;

// The rows of an nvidia-smi trace at the SW power cap (200 ms apart).
std::vector<TraceRow> LoadedRows(const std::vector<TraceRow>& trace) {
  std::vector<TraceRow> rows;
  for (const TraceRow& r : trace) {
    if (r.reasons == kReasonSwPowerCap) rows.push_back(r);
  }
  return rows;
}

// A GPU already at its power cap whose clock follows the trace.
class DriftingGpu final : public CandidateTimer, public GpuMonitor, public EngineClock {
 public:
  DriftingGpu(const std::vector<TraceRow>& trace, std::vector<double> true_us, double noise,
              uint64_t seed)
      : trace_(trace), true_us_(std::move(true_us)), rng_(seed), noise_(0, noise) {
    start_row_ = std::uniform_int_distribution<size_t>(0, trace_.size() - 1)(rng_);
  }
  int Candidates() const override { return static_cast<int>(true_us_.size()); }
  absl::StatusOr<double> Time(int c) override {
    const double us =
        true_us_[static_cast<size_t>(c)] * 1455 / Row().sm_clock_mhz * (1 + noise_(rng_));
    now_s_ += us / 1e6;
    return us;
  }
  GpuReading Read() override {
    const TraceRow r = Row();
    return {now_s_, r.sm_clock_mhz, r.power_w, kReasonSwPowerCap, true};
  }
  double NowS() override { return now_s_; }
  void SleepS(double s) override { now_s_ += s; }

 private:
  TraceRow Row() const {
    // Back and forth through the trace, so that it never jumps.
    const auto step = static_cast<size_t>(now_s_ / 0.2) + start_row_;
    const size_t period = 2 * (trace_.size() - 1);
    const size_t at = step % period;
    return trace_[at < trace_.size() ? at : period - at];
  }
  const std::vector<TraceRow>& trace_;
  std::vector<double> true_us_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_;
  size_t start_row_ = 0;
  double now_s_ = 0;
};

struct Tally {
  int races = 0;
  int any_slower = 0;     // equal: a wrong "slower"
  int wrong = 0;          // unequal: a verdict that contradicts the truth
  int best_leads = 0;     // the truly fastest is the leader
  int fully_ordered = 0;  // every slower candidate called slower, in true order
  int all_tied = 0;       // every candidate tied with the leader
  double rounds = 0;
  double seconds = 0;
};

// Unequal candidates: true times base·(1 + step·i); a verdict is wrong when
// a candidate is called slower than the leader while truly faster or equal,
// or tied with it while truly more than the resolution apart.
void Score(const StudyRaceResult& race, const std::vector<double>& true_us, double resolution,
           Tally& t) {
  ++t.races;
  t.rounds += race.rounds;
  t.seconds += race.seconds;
  const auto& s = race.standings;
  const int best =
      static_cast<int>(std::min_element(true_us.begin(), true_us.end()) - true_us.begin());
  const double lead_us = true_us[static_cast<size_t>(s.front().candidate)];
  bool any_slower = false, wrong = false, ordered = s.front().candidate == best, tied = true;
  for (size_t i = 1; i < s.size(); ++i) {
    const double ratio = true_us[static_cast<size_t>(s[i].candidate)] / lead_us;
    any_slower = any_slower || s[i].verdict == RaceVerdict::kSlower;
    tied = tied && s[i].verdict == RaceVerdict::kTied;
    if (s[i].verdict == RaceVerdict::kSlower && ratio <= 1 + resolution) wrong = true;
    if (s[i].verdict == RaceVerdict::kTied && std::abs(ratio - 1) > resolution) wrong = true;
    ordered = ordered && s[i].verdict == RaceVerdict::kSlower &&
              true_us[static_cast<size_t>(s[i].candidate)] >
                  true_us[static_cast<size_t>(s[i - 1].candidate)];
  }
  t.any_slower += any_slower;
  t.wrong += wrong;
  t.best_leads += s.front().candidate == best;
  t.fully_ordered += ordered;
  t.all_tied += tied;
}

Tally Run(const std::vector<TraceRow>& trace, const std::vector<double>& true_us, double noise,
          double resolution, int races, uint64_t seed0) {
  Tally t;
  StudyRaceOptions options;
  options.resolution = resolution;
  for (int r = 0; r < races; ++r) {
    DriftingGpu gpu(trace, true_us, noise, seed0 + static_cast<uint64_t>(r));
    auto race = RaceCandidates(gpu, gpu, gpu, options);
    if (!race.ok()) {
      std::cerr << race.status() << "\n";
      std::exit(1);
    }
    Score(*race, true_us, resolution, t);
  }
  return t;
}

double Pct(int k, int n) { return n ? 100.0 * k / n : 0; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: race_bench TRACE_CSV [--races N]\n";
    return 2;
  }
  int races = 1000;
  if (argc >= 4 && std::string(argv[2]) == "--races") races = std::max(10, std::atoi(argv[3]));
  const auto recorded = LoadTrace(argv[1]);
  if (!recorded.ok()) {
    std::cerr << recorded.status().message() << "\n";
    return 1;
  }
  const std::vector<TraceRow> trace = LoadedRows(*recorded);
  if (trace.size() < 10) {
    std::cerr << argv[1] << ": fewer than 10 power-capped rows\n";
    return 1;
  }
  std::printf(
      "simulated races (RaceCandidates on a drifting trace-driven GPU; not a GPU's figures)\n");
  std::printf(
      "stated family-wise error rate of the verdicts: %.0f%%; resolution 1%% unless said\n\n",
      100 * kRaceErrorRate);
  std::printf("equal candidates (target: races calling any candidate slower <= 5%%)\n");
  std::printf("%5s %6s %6s %14s %12s %8s %8s\n", "cands", "noise", "races", "any slower %",
              "all tied %", "rounds", "sim s");
  for (int n : {8, 32}) {
    for (double noise : {0.01, 0.02, 0.03}) {
      const int k = n == 32 ? std::max(10, races / 4) : races;
      const Tally t = Run(trace, std::vector<double>(static_cast<size_t>(n), 3000), noise, 0.01, k,
                          1000u * static_cast<uint64_t>(n) + static_cast<uint64_t>(noise * 1000));
      std::printf("%5d %5.0f%% %6d %14.1f %12.1f %8.1f %8.1f\n", n, 100 * noise, t.races,
                  Pct(t.any_slower, t.races), Pct(t.all_tied, t.races), t.rounds / t.races,
                  t.seconds / t.races);
    }
  }
  std::printf(
      "\nunequal candidates: 4 MLPs a step apart (3000 us, +step, +2 steps, +3 steps), noise "
      "1%%\n");
  std::printf("%6s %6s %6s %13s %14s %9s %8s %8s\n", "step", "resol", "races", "best leads %",
              "all ordered %", "wrong %", "rounds", "sim s");
  for (const auto& [step, resolution] :
       {std::pair{0.01, 0.005}, std::pair{0.02, 0.01}, std::pair{0.02, 0.005}}) {
    std::vector<double> us;
    for (int i = 0; i < 4; ++i) us.push_back(3000 * (1 + step * i));
    std::rotate(us.begin(), us.begin() + 1, us.end());  // the best is not candidate 0
    const Tally t =
        Run(trace, us, 0.01, resolution, races, 77 + static_cast<uint64_t>(step * 1000));
    std::printf("%5.0f%% %5.1f%% %6d %13.1f %14.1f %9.1f %8.1f %8.1f\n", 100 * step,
                100 * resolution, t.races, Pct(t.best_leads, t.races),
                Pct(t.fully_ordered, t.races), Pct(t.wrong, t.races), t.rounds / t.races,
                t.seconds / t.races);
  }
  return 0;
}
