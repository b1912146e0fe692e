#include "crest/measure/algo_race.h"

#include <algorithm>

namespace crest::measure {

AlgoRace::AlgoRace(int candidates, AlgoRaceOptions options)
    : options_(options),
      samples_(static_cast<size_t>(std::max(candidates, 0))),
      discarded_(samples_.size(), 0),
      in_race_(samples_.size(), true) {}

std::vector<int> AlgoRace::NextRound() const {
  std::vector<int> order;
  const int n = Size();
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>((rounds_ + i) % n);
    if (in_race_[Index(c)] &&
        static_cast<int64_t>(samples_[Index(c)].size()) < options_.max_samples) {
      order.push_back(c);
    }
  }
  return order;
}

void AlgoRace::Add(int candidate, double sample_us) {
  samples_[Index(candidate)].push_back(sample_us);
}

void AlgoRace::CountDiscarded(int candidate) { ++discarded_[Index(candidate)]; }

Interval AlgoRace::IntervalOf(int candidate) const { return MedianInterval(Samples(candidate)); }

int AlgoRace::Leader() const {
  int leader = -1;
  double best = 0;
  for (int c = 0; c < Size(); ++c) {
    if (samples_[Index(c)].empty()) continue;
    const double m = Median(samples_[Index(c)]);
    if (leader < 0 || m < best) {
      leader = c;
      best = m;
    }
  }
  return leader;
}

void AlgoRace::EndRound() {
  ++rounds_;
  const int leader = Leader();
  if (leader < 0) return;
  const Interval lead = IntervalOf(leader);
  for (int c = 0; c < Size(); ++c) {
    if (c == leader || !in_race_[Index(c)]) continue;
    if (static_cast<int64_t>(samples_[Index(c)].size()) < options_.min_samples) continue;
    if (IntervalOf(c).low > lead.high) in_race_[Index(c)] = false;
  }
}

bool AlgoRace::Converged(int c) const {
  const auto& s = samples_[Index(c)];
  if (static_cast<int64_t>(s.size()) < options_.min_samples) return false;
  const double median = Median(s);
  const Interval ci = MedianInterval(s);
  return median > 0 && (ci.high - ci.low) / 2 <= options_.max_noise * median;
}

std::string AlgoRace::StopReason(double sampling_s) const {
  if (Size() == 0) return "no candidates";
  bool all_converged = true;
  bool floor_met = true;  // every candidate left has had min_samples tries
  bool any_left = false;
  for (int c = 0; c < Size(); ++c) {
    const auto tries = static_cast<int64_t>(samples_[Index(c)].size()) + discarded_[Index(c)];
    if (!in_race_[Index(c)]) continue;
    if (static_cast<int64_t>(samples_[Index(c)].size()) >= options_.max_samples) continue;
    any_left = true;
    all_converged = all_converged && Converged(c);
    floor_met = floor_met && tries >= options_.min_samples;
  }
  if (!any_left) return "sample limit";
  if (all_converged) return "converged";
  if (floor_met && sampling_s >= options_.max_seconds) return "time budget";
  return "";
}

bool AlgoRace::Finished(double sampling_s) const { return !StopReason(sampling_s).empty(); }

}  // namespace crest::measure
