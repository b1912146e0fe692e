#include "crest/tuner/ranking.h"

#include <map>

namespace crest {

int KindOrder(Source source) {
  switch (source) {
    case Source::kMeasured: return 0;
    case Source::kMixed: return 1;
    case Source::kPredicted: return 2;
    case Source::kImported: return 3;
    case Source::kUnknown: return 4;
  }
  return 4;
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
  // Groups: the fastest row left leads; every row left of its kind whose
  // interval reaches the leader's time joins. Rows of one kind are
  // contiguous in `ranked`, fastest first.
  int groups = 0;
  std::vector<bool> placed(keys.size(), false);
  for (size_t at = 0; at < ranked.size(); ++at) {
    const size_t leader = ranked[at];
    if (placed[leader]) continue;
    ++groups;
    const TieKey& lead = *keys[leader];
    for (size_t j = at; j < ranked.size() && keys[ranked[j]]->source == lead.source; ++j) {
      const size_t r = ranked[j];
      if (placed[r] || keys[r]->low_us > lead.time_us) continue;
      placed[r] = true;
      out.group[r] = groups;
      out.order.push_back(r);
    }
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

}  // namespace crest
