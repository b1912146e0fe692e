#include "crest/tuner/ranking.h"

#include <map>

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

RankedOrder RankWithTies(const std::vector<std::optional<TieKey>>& keys, Source first) {
  RankedOrder out;
  out.group.assign(keys.size(), 0);
  // Ranked rows by kind (the first kind ahead of the rest), then time.
  std::vector<size_t> ranked;
  std::vector<size_t> left_out;
  for (size_t i = 0; i < keys.size(); ++i) (keys[i] ? ranked : left_out).push_back(i);
  const auto kind = [&](size_t i) {
    return keys[i]->source == first ? -1 : KindOrder(keys[i]->source);
  };
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return std::pair(kind(a), keys[a]->time_us) < std::pair(kind(b), keys[b]->time_us);
  });
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
    std::vector<size_t> by_low(ranked.begin() + static_cast<std::ptrdiff_t>(begin),
                               ranked.begin() + static_cast<std::ptrdiff_t>(end));
    std::stable_sort(by_low.begin(), by_low.end(),
                     [&](size_t a, size_t b) { return low(a) < low(b); });
    size_t next_low = 0;
    for (size_t at = begin; at < end; ++at) {
      if (placed[ranked[at]]) continue;
      const double leader_time = keys[ranked[at]]->time_us;
      ++groups;
      members.clear();
      for (; next_low < by_low.size() && low(by_low[next_low]) <= leader_time; ++next_low) {
        if (!placed[by_low[next_low]]) members.push_back(by_low[next_low]);
      }
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
