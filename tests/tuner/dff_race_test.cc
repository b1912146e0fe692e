// ApplyRace: a stored race orders a d_ff ranking's leading measured rows
// only when it timed them from the same run, and every row the ranking ties
// with the best was in it.
#include <gtest/gtest.h>

#include "crest/tuner/dff_ranking.h"

namespace crest::tuner {
namespace {

const RunInfo kRun{1, "uid-1", "nightly", 10, "GPU-1", "node1"};

DffRow Measured(int64_t d_ff, int tie_group) {
  DffRow r;
  r.d_ff = d_ff;
  r.source = Source::kMeasured;
  r.tie_group = tie_group;
  r.runs = {kRun};
  return r;
}

DffRow Predicted(int64_t d_ff, int tie_group) {
  DffRow r;
  r.d_ff = d_ff;
  r.source = Source::kPredicted;
  r.tie_group = tie_group;
  return r;
}

// A standing as these tests write it: d_ff, verdict, tie group, ratio and
// its interval.
struct Given {
  int64_t d_ff;
  const char* verdict;
  int tie_group;
  double ratio, ratio_low, ratio_high;
};

DffRace Race(const std::vector<Given>& given) {
  DffRace race;
  race.info.race_id = 4;
  race.info.run = kRun;
  for (const Given& g : given) {
    RaceStanding s;
    s.value = g.d_ff;
    s.verdict = ParseRaceVerdict(g.verdict).value();
    s.tie_group = g.tie_group;
    s.ratio = g.ratio;
    s.ratio_low = g.ratio_low;
    s.ratio_high = g.ratio_high;
    race.standings.push_back(s);
  }
  return race;
}

std::vector<int64_t> Order(const std::vector<DffRow>& rows) {
  std::vector<int64_t> out;
  for (const DffRow& r : rows) out.push_back(r.d_ff);
  return out;
}

std::vector<int> Groups(const std::vector<DffRow>& rows) {
  std::vector<int> out;
  for (const DffRow& r : rows) out.push_back(r.tie_group);
  return out;
}

TEST(RaceVerdict, EachNameReadsBackAsItsVerdictAndNoOtherWordDoes) {
  for (RaceVerdict v :
       {RaceVerdict::kLeader, RaceVerdict::kSlower, RaceVerdict::kTied, RaceVerdict::kUnresolved}) {
    EXPECT_EQ(ParseRaceVerdict(RaceVerdictName(v)), v);
  }
  EXPECT_EQ(ParseRaceVerdict("faster"), std::nullopt);
  EXPECT_EQ(ParseRaceVerdict(""), std::nullopt);
}

TEST(ApplyRace, RacedRowsLeadInTheRacesOrderAndGroupsAreRenumberedInListingOrder) {
  // The pass: 100, 200, 300 tied; 400 next; then predicted rows.
  std::vector<DffRow> rows = {Measured(100, 1), Measured(200, 1),  Measured(300, 1),
                              Measured(400, 2), Predicted(500, 3), Predicted(600, 4)};
  const DffRace race = Race({{300, "leader", 1, 1, 1, 1},
                             {100, "tied", 1, 1.002, 0.996, 1.008},
                             {200, "slower", 2, 1.02, 1.015, 1.025}});
  EXPECT_EQ(ApplyRace(race, rows), "");
  EXPECT_EQ(Order(rows), (std::vector<int64_t>{300, 100, 200, 400, 500, 600}));
  EXPECT_EQ(Groups(rows), (std::vector<int>{1, 1, 2, 3, 4, 5}));
  EXPECT_EQ(rows[2].race_verdict, "slower");
  EXPECT_DOUBLE_EQ(rows[2].race_ratio_low, 1.015);
  EXPECT_TRUE(rows[3].race_verdict.empty());
}

TEST(ApplyRace, ARaceThatMissedARowTiedWithTheBestOrTimedAnotherRunIsNotUsed) {
  const std::vector<DffRow> pass = {Measured(100, 1), Measured(200, 1), Measured(300, 1)};
  std::vector<DffRow> rows = pass;
  const std::string missed =
      ApplyRace(Race({{100, "leader", 1, 1, 1, 1}, {200, "slower", 2, 1.02, 1.01, 1.03}}), rows);
  EXPECT_EQ(missed, "race 4 (of job 1) did not time d_ff 300, which is tied with the best here");
  EXPECT_EQ(Order(rows), Order(pass)) << "left as it was";
  EXPECT_EQ(Groups(rows), Groups(pass));

  rows[1].runs.front().job_id = 2;  // 200 is answered from another run
  const std::string other = ApplyRace(Race({{100, "leader", 1, 1, 1, 1},
                                            {200, "tied", 1, 1, 0.99, 1.01},
                                            {300, "tied", 1, 1, 0.99, 1.01}}),
                                      rows);
  EXPECT_EQ(other,
            "race 4 (of job 1) timed d_ff 200, which this answer takes from another run (or "
            "predicts)");
  EXPECT_TRUE(rows[0].race_verdict.empty());
}

}  // namespace
}  // namespace crest::tuner
