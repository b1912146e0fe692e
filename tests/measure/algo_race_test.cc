#include "crest/measure/algo_race.h"

#include <random>

#include "gtest/gtest.h"

namespace crest::measure {
namespace {

// Feeds rounds of noisy samples around `means` until the race ends.
int RunRace(AlgoRace& race, const std::vector<double>& means, double noise, double per_round_s,
            uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0, noise);
  double sampling = 0;
  int rounds = 0;
  while (!race.Finished(sampling) && rounds < 100000) {
    for (int c : race.NextRound()) race.Add(c, means[static_cast<size_t>(c)] * (1 + jitter(rng)));
    race.EndRound();
    sampling += per_round_s;
    ++rounds;
  }
  return rounds;
}

TEST(AlgoRace, RoundsVisitEveryCandidateRotatingWhoGoesFirst) {
  AlgoRace race(3, {});
  EXPECT_EQ(race.NextRound(), (std::vector<int>{0, 1, 2}));
  race.EndRound();
  EXPECT_EQ(race.NextRound(), (std::vector<int>{1, 2, 0}));
}

TEST(AlgoRace, AClearlySlowerCandidateLeavesAfterTheMinimumOnly) {
  AlgoRace race(3, {.min_samples = 5, .max_noise = 0.001, .max_seconds = 100});
  for (int r = 0; r < 4; ++r) {
    for (int c : race.NextRound()) race.Add(c, c == 2 ? 200.0 + r : 100.0 + r * 0.1);
    race.EndRound();
  }
  EXPECT_TRUE(race.InRace(2)) << "dropped before min_samples";
  for (int c : race.NextRound()) race.Add(c, c == 2 ? 205.0 : 100.2);
  race.EndRound();
  EXPECT_FALSE(race.InRace(2));
  EXPECT_TRUE(race.InRace(0));
  EXPECT_TRUE(race.InRace(1)) << "an overlapping candidate must stay";
  EXPECT_EQ(race.NextRound().size(), 2u);
}

TEST(AlgoRace, EndsWhenEveryContenderIsWithinTheNoiseBound) {
  AlgoRace race(2, {.min_samples = 5, .max_noise = 0.01, .max_seconds = 1e9});
  RunRace(race, {100, 300}, 0.005, 0.01);
  EXPECT_EQ(race.StopReason(0), "converged");
  EXPECT_EQ(race.Leader(), 0);
  const Interval ci = race.IntervalOf(0);
  EXPECT_LE((ci.high - ci.low) / 2, 0.01 * 100.5);
  EXPECT_EQ(race.Samples(1).size(), 5u) << "the loser stopped at the minimum";
}

TEST(AlgoRace, NoisyCandidatesRunToTheTimeBudgetButNotBelowTheMinimum) {
  AlgoRace race(2, {.min_samples = 8, .max_noise = 0.0001, .max_seconds = 0.05});
  RunRace(race, {100, 101}, 0.05, 0.1);  // the budget is spent after one round
  EXPECT_EQ(race.StopReason(1), "time budget");
  EXPECT_GE(race.Samples(0).size(), 8u);
  EXPECT_GE(race.Samples(1).size(), 8u);
}

TEST(AlgoRace, DiscardedSamplesCountTowardTheMinimumButNotTheStatistics) {
  AlgoRace race(1, {.min_samples = 3, .max_noise = 1e-9, .max_seconds = 0});
  for (int i = 0; i < 3; ++i) {
    race.CountDiscarded(0);
    race.EndRound();
  }
  EXPECT_TRUE(race.Finished(1)) << "a candidate whose samples are all discarded hung the race";
  EXPECT_EQ(race.Discarded(0), 3);
  EXPECT_TRUE(race.Samples(0).empty());
}

TEST(AlgoRace, StopsAtTheSampleLimit) {
  AlgoRace race(1, {.min_samples = 3, .max_samples = 10, .max_noise = 0, .max_seconds = 1e9});
  RunRace(race, {100}, 0.1, 0.001);
  EXPECT_EQ(race.Samples(0).size(), 10u);
  EXPECT_EQ(race.StopReason(0), "sample limit");
}

}  // namespace
}  // namespace crest::measure
