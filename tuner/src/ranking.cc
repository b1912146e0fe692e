#include "crest/tuner/ranking.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace crest::tuner {

int KindOrder(Source source) {
  switch (source) {
    case Source::kMeasured:
      return 0;
    case Source::kReplayed:
      return 1;
    case Source::kMixed:
      return 2;
    case Source::kPredicted:
      return 3;
    case Source::kImported:
      return 4;
    case Source::kUnknown:
      return 5;
  }
  return 5;
}

namespace {

// A time's place in order, as an integer: times sort by it as by < (-0 as
// +0), and a NaN, which < does not order, after every time, so std::sort's
// comparisons stay a strict weak order.
int64_t TotalOrderKey(double t) {
  if (std::isnan(t)) return std::numeric_limits<int64_t>::max();
  const auto bits = std::bit_cast<int64_t>(t + 0.0);
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}

}  // namespace

RankedOrder RankWithTies(const std::vector<std::optional<TieKey>>& keys, Source first) {
  RankedOrder out;
  out.group.assign(keys.size(), 0);
  // Ranked rows by kind (the first kind ahead of the rest), then time.
  // Sorted on (kind, time, index), as a stable sort on (kind, time) would;
  // the sort keys are made once, not in every comparison.
  std::vector<std::tuple<int, int64_t, size_t>> by_time;
  std::vector<size_t> left_out;
  by_time.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i]) {
      left_out.push_back(i);
      continue;
    }
    const int kind = keys[i]->source == first ? -1 : KindOrder(keys[i]->source);
    by_time.emplace_back(kind, TotalOrderKey(keys[i]->time_us), i);
  }
  std::sort(by_time.begin(), by_time.end());
  std::vector<size_t> ranked;
  ranked.reserve(by_time.size());
  for (const auto& key : by_time) ranked.push_back(std::get<2>(key));
  // Groups, kind by kind: the fastest row left leads; every row left whose
  // interval reaches the leader's time joins. Leaders' times only grow, so a
  // group is the rows whose low end lies between the previous leader's time
  // and this one's: one pass over the rows sorted by their low end (n log n;
  // a window of 100,000 candidates must not cost n²).
  const auto low = [&](size_t i) { return std::min(keys[i]->low_us, keys[i]->time_us); };
  int groups = 0;
  std::vector<bool> placed(keys.size(), false);
  std::vector<size_t> position(keys.size(), 0);  // in time order
  std::vector<size_t> members;                   // of one group; kept, not made a group at a time
  out.order.reserve(keys.size());
  for (size_t at = 0; at < ranked.size(); ++at) position[ranked[at]] = at;
  for (size_t begin = 0; begin < ranked.size();) {
    size_t end = begin;
    while (end < ranked.size() && keys[ranked[end]]->source == keys[ranked[begin]]->source) ++end;
    // By low end, then time order (a stable sort of the kind's rows on low).
    std::vector<std::pair<int64_t, size_t>> lows;
    lows.reserve(end - begin);
    for (size_t at = begin; at < end; ++at) lows.emplace_back(TotalOrderKey(low(ranked[at])), at);
    std::sort(lows.begin(), lows.end());
    std::vector<size_t> by_low;
    by_low.reserve(lows.size());
    for (const auto& [_, at] : lows) by_low.push_back(ranked[at]);
    size_t next_low = 0;
    for (size_t at = begin; at < end; ++at) {
      if (placed[ranked[at]]) continue;
      const size_t leader = ranked[at];
      const double leader_time = keys[leader]->time_us;
      ++groups;
      members.clear();
      for (; next_low < by_low.size() && low(by_low[next_low]) <= leader_time; ++next_low) {
        if (!placed[by_low[next_low]]) members.push_back(by_low[next_low]);
      }
      // A leader reaches its own time, but for a NaN, which reaches none:
      // it is a group alone.
      if (!(low(leader) <= leader_time)) members.push_back(leader);
      std::sort(members.begin(), members.end(),
                [&](size_t a, size_t b) { return position[a] < position[b]; });
      for (size_t r : members) {
        placed[r] = true;
        out.group[r] = groups;
        out.order.push_back(r);
      }
    }
    begin = end;
  }
  out.order.insert(out.order.end(), left_out.begin(), left_out.end());
  return out;
}

Source HeadlineKind(const std::vector<std::pair<Source, double>>& speedups) {
  std::map<int, std::pair<Source, double>> best;  // by KindOrder: the kind's largest speed-up
  for (const auto& [source, speedup] : speedups) {
    auto [it, added] = best.try_emplace(KindOrder(source), source, speedup);
    if (!added) it->second.second = std::max(it->second.second, speedup);
  }
  if (best.empty()) return Source::kPredicted;
  Source headline = best.begin()->second.first;
  double top = best.begin()->second.second;
  for (const auto& [order, kind] : best) {
    if (kind.second > top) {  // strictly: an equal speed-up keeps the earlier kind
      headline = kind.first;
      top = kind.second;
    }
  }
  return headline;
}

}  // namespace crest::tuner
