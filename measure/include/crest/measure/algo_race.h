// Racing the candidate algorithms of one GEMM (the algorithm race; a d_ff
// study's race of its leading candidates is study_race.h), instead of a fixed budget
// each. Candidates are sampled round-robin, so drift in clocks or power falls
// on all alike. Once a candidate has min_samples, it leaves the race when
// the 95% interval of its median lies wholly above the leader's: it is
// clearly slower, and more samples would not change that. The race ends
// when every candidate still in it has a median known to within max_noise,
// or when the sampling budget (time or samples) is spent; the time budget
// ends a race only after every candidate in it has had min_samples tries
// (kept or discarded), so a slow GEMM still gets a median of several.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crest/measure/sampling.h"

namespace crest::measure {

struct AlgoRaceOptions {
  int64_t min_samples = 5;
  int64_t max_samples = 10000;  // per candidate
  double max_noise = 0.01;      // interval half-width / median
  double max_seconds = 0.25;    // sampling time, all candidates together [s]
};

class AlgoRace final {
 public:
  AlgoRace(int candidates, AlgoRaceOptions options);

  // The candidates to sample next round, in round-robin order (rotated each
  // round so no candidate always runs first).
  std::vector<int> NextRound() const;
  void Add(int candidate, double sample_us);
  // A sample of this candidate that the clock policy did not count.
  void CountDiscarded(int candidate);
  // Ends a round: drops candidates that are clearly slower than the leader.
  void EndRound();
  // True when the race is over after `sampling_s` seconds of sampling.
  bool Finished(double sampling_s) const;
  // Why it ended, in words ("converged", "time budget", …); empty while running.
  std::string StopReason(double sampling_s) const;

  int Leader() const;  // the candidate with the smallest median; -1 before any sample
  bool InRace(int candidate) const { return in_race_[Index(candidate)]; }
  const std::vector<double>& Samples(int candidate) const { return samples_[Index(candidate)]; }
  int64_t Discarded(int candidate) const { return discarded_[Index(candidate)]; }
  Interval IntervalOf(int candidate) const;
  int64_t rounds() const { return rounds_; }

 private:
  static size_t Index(int c) { return static_cast<size_t>(c); }
  bool Converged(int candidate) const;
  int Size() const { return static_cast<int>(samples_.size()); }

  AlgoRaceOptions options_;
  std::vector<std::vector<double>> samples_;
  std::vector<int64_t> discarded_;
  std::vector<bool> in_race_;
  int64_t rounds_ = 0;
};

}  // namespace crest::measure
