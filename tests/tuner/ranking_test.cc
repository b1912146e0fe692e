#include "crest/tuner/ranking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

TieKey Key(Source source, double time_us, double low_us = 0) {
  return TieKey{source, time_us, low_us == 0 ? time_us : low_us};
}

// The order RankWithTies' groups start from, written the plain way: the
// ranked rows stably sorted by (kind, time), the first kind ahead.
std::vector<size_t> ByKindThenTime(const std::vector<std::optional<TieKey>>& keys, Source first) {
  std::vector<size_t> ranked;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i]) ranked.push_back(i);
  }
  const auto kind = [&](size_t i) {
    return keys[i]->source == first ? -1 : KindOrder(keys[i]->source);
  };
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return std::pair(kind(a), keys[a]->time_us) < std::pair(kind(b), keys[b]->time_us);
  });
  return ranked;
}

TEST(RankWithTies, ExactTimesListFastestFirstAndEqualTimesInTheirInputOrder) {
  // Exact times (no interval) tie only when equal; random inputs with many
  // equal times, several kinds and rows left out.
  std::mt19937 rng(7);
  const Source kinds[] = {Source::kMeasured, Source::kReplayed, Source::kPredicted};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::optional<TieKey>> keys;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      if (rng() % 10 == 0) {
        keys.push_back(std::nullopt);
        continue;
      }
      keys.push_back(Key(kinds[rng() % 3], 1.0 + static_cast<double>(rng() % 5)));
    }
    const Source first = kinds[rng() % 3];
    const RankedOrder ranked = RankWithTies(keys, first);
    std::vector<size_t> expected = ByKindThenTime(keys, first);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i]) expected.push_back(i);  // left out: last, in input order
    }
    ASSERT_EQ(ranked.order, expected) << "trial " << trial;
  }
}

TEST(RankWithTies, NegativeZeroIsZeroAndANanTimeStillListsEveryRowOnce) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::optional<TieKey>> keys = {
      Key(Source::kMeasured, 0.0), Key(Source::kMeasured, -0.0), Key(Source::kMeasured, 2.0)};
  EXPECT_EQ(RankWithTies(keys, Source::kMeasured).order, (std::vector<size_t>{0, 1, 2}));

  keys.clear();
  for (int i = 0; i < 100; ++i) {
    keys.push_back(Key(Source::kMeasured, i % 7 == 0 ? nan : static_cast<double>(100 - i)));
  }
  const RankedOrder ranked = RankWithTies(keys, Source::kMeasured);
  std::vector<size_t> listed = ranked.order;
  std::sort(listed.begin(), listed.end());
  std::vector<size_t> every(keys.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  EXPECT_EQ(listed, every);
  // The rows with a time come fastest first.
  std::vector<double> times;
  for (size_t i : ranked.order) {
    if (!std::isnan(keys[i]->time_us)) times.push_back(keys[i]->time_us);
  }
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

}  // namespace
}  // namespace crest::tuner
