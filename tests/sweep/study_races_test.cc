// A measuring sweep races each d_ff study's leading candidates after its
// per-GEMM pass, stores the race, and the d_ff answer orders its leading
// rows by it (on the fake measuring backend: scripted times, steady clock).
#include <algorithm>

#include "crest/answers/answers.h"
#include "crest/sweep/runner.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::sweep {
namespace {

using crest::testing::EveryCandidate;
using crest::testing::FakeMeasuringBackend;
using crest::testing::OpenSweepDb;
using crest::testing::Spec;
using crest::testing::TempDir;

// h = 4096, window ±4 (d_ff 10918 … 10926): CloseLeadersScript's times.
constexpr auto Script = crest::testing::CloseLeadersScript;

const tuner::DffRow& RowOf(const tuner::DffRanking& r, int64_t d_ff) {
  const auto it = std::find_if(r.rows.begin(), r.rows.end(),
                               [&](const tuner::DffRow& row) { return row.d_ff == d_ff; });
  EXPECT_NE(it, r.rows.end()) << d_ff;
  return *it;
}

absl::StatusOr<tuner::DffRanking> Answer(store::Store& db, bool races,
                                         tuner::AlgoChoice algo = tuner::AlgoChoice::kBest) {
  answers::AnswerOptions options;
  options.races = races;
  options.algo = algo;
  return answers::StoreAnswers(db, "s.db", options)
      ->Dff(EveryCandidate(4096, 4), **tuner::FindGpu("h100"));
}

// A fresh database and a fake measuring backend timing CloseLeadersScript.
class StudyRaces : public ::testing::Test {
 protected:
  StudyRaces() { backend.script = Script; }
  TempDir dir;
  std::unique_ptr<store::Store> db = OpenSweepDb(dir);
  FakeMeasuringBackend backend;
};

TEST_F(StudyRaces, TheRaceSplitsWhatThePassTiedAndTheAnswerUsesIt) {
  // 10918 is 0.8% behind: slower only at a resolution finer than that.
  const SweepSpec spec = Spec(
      R"({"dff": [{"hidden": 4096, "window": 4}], "measure": {"race": {"resolution": 0.005}}})");
  auto out = RunSweep(spec, backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->job.state, store::JobState::kDone);
  ASSERT_EQ(out->races.size(), 1u);
  const StudyRaceReport& report = out->races.front();
  EXPECT_EQ(report.study, "dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused");
  ASSERT_GT(report.race_id, 0) << report.why_not;
  EXPECT_EQ(report.raced_job, out->job.id);
  std::vector<int64_t> raced = report.d_ff;
  std::sort(raced.begin(), raced.end());
  EXPECT_EQ(raced, (std::vector<int64_t>{10918, 10920, 10924}))
      << "the pass's tie group, and nothing 20% behind";
  for (const auto& algos : backend.raced_algos) {
    EXPECT_EQ(algos, (std::vector<int64_t>{20, 20})) << "each GEMM with the run's best algorithm";
  }
  EXPECT_TRUE(report.result.settled);

  auto pass = Answer(*db, /*races=*/false);
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_FALSE(pass->race.has_value());
  EXPECT_EQ(RowOf(*pass, 10918).tie_group, 1) << "the pass's ±1% intervals cannot tell 0.8%";
  EXPECT_EQ(pass->tied_with_best, 3);

  auto raced_answer = Answer(*db, /*races=*/true);
  ASSERT_TRUE(raced_answer.ok()) << raced_answer.status();
  const tuner::DffRanking& r = *raced_answer;
  ASSERT_TRUE(r.race.has_value()) << r.race_note;
  EXPECT_EQ(r.race->race_id, report.race_id);
  EXPECT_EQ(r.race->run.job_id, out->job.id);
  EXPECT_EQ(r.race->candidates, 3);
  EXPECT_EQ(r.tied_with_best, 2);
  ASSERT_GE(r.rows.size(), 3u);
  std::vector<int64_t> leaders = {r.rows[0].d_ff, r.rows[1].d_ff};
  std::sort(leaders.begin(), leaders.end());
  EXPECT_EQ(leaders, (std::vector<int64_t>{10920, 10924}));
  EXPECT_EQ(r.rows[0].race_verdict, "leader");
  EXPECT_EQ(r.rows[1].race_verdict, "tied");
  EXPECT_EQ(r.rows[2].d_ff, 10918);
  EXPECT_EQ(r.rows[2].race_verdict, "slower");
  EXPECT_EQ(r.rows[2].tie_group, 2);
  EXPECT_GT(r.rows[2].race_ratio_low, 1.0);
  EXPECT_NEAR(r.rows[2].race_ratio, 2016.0 / 2000.5, 0.002) << "the race measures the 0.8%";
  for (size_t i = 3; i < r.rows.size(); ++i) {
    EXPECT_TRUE(r.rows[i].race_verdict.empty()) << "not raced: " << r.rows[i].d_ff;
    EXPECT_GT(r.rows[i].tie_group, 2);
  }
}

TEST_F(StudyRaces, NoRaceWhenDisabledOrWhenOnlyTheLeaderIsClose) {
  auto off = RunSweep(
      Spec(R"({"dff": [{"hidden": 4096, "window": 4}], "measure": {"race": {"enabled": false}}})"),
      backend, *db, {});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(off->races.empty());

  FakeMeasuringBackend plain;  // 10944 twice as fast as every other candidate
  auto alone =
      RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 24, "align": 8}]})"), plain, *db, {});
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_EQ(alone->races.size(), 1u);
  EXPECT_EQ(alone->races.front().race_id, 0);
  EXPECT_NE(alone->races.front().why_not.find("only the leader (d_ff 10944)"), std::string::npos)
      << alone->races.front().why_not;
}

TEST_F(StudyRaces, ATieGroupLargerThanARaceCanOrderIsNotRacedAndSaysWhy) {
  // Every candidate of a 49-wide window equal: the pass ties all 49, and a
  // race of 32 of them could not order the answer (ApplyRace needs them all).
  FakeMeasuringBackend flat;
  flat.script = [](const tuner::GemmShape&) { return 1000.0; };
  auto out = RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 24}]})"), flat, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->races.size(), 1u);
  EXPECT_EQ(out->races.front().race_id, 0);
  EXPECT_TRUE(flat.raced_algos.empty()) << "no device time spent on a race that cannot be used";
  EXPECT_NE(out->races.front().why_not.find("49 measured candidates are tied with the best, more "
                                            "than the 32 a race can order"),
            std::string::npos)
      << out->races.front().why_not;
}

TEST_F(StudyRaces, AStudyGivenTwiceIsRacedOnce) {
  auto out =
      RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 4}, {"hidden": 4096, "window": 4}]})"),
               backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->races.size(), 1u);
}

TEST_F(StudyRaces, ASweepRunsSixtyFourRacesAtMost) {
  std::string studies;
  for (int tokens = 1; tokens <= 66; ++tokens) {
    studies += (studies.empty() ? "" : ", ") +
               std::string(R"({"hidden": 4096, "window": 4, "tokens": )") + std::to_string(tokens) +
               "}";
  }
  auto out = RunSweep(Spec(R"({"dff": [)" + studies + "]}"), backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->races.size(), 66u);
  EXPECT_GT(out->races[63].race_id, 0);
  EXPECT_EQ(out->races[64].race_id, 0);
  EXPECT_EQ(out->races[65].why_not, "a sweep runs 64 races at most");
}

TEST_F(StudyRaces, AnAnswerFromANewerRunDoesNotUseAnOlderRunsRace) {
  // 10918 is 0.8% behind: slower only at a resolution finer than that.
  const SweepSpec spec = Spec(
      R"({"dff": [{"hidden": 4096, "window": 4}], "measure": {"race": {"resolution": 0.005}}})");
  auto first = RunSweep(spec, backend, *db, {});
  ASSERT_TRUE(first.ok() && first->races.front().race_id > 0);
  // Measured again, not raced: the answer now comes from the new run.
  SweepOptions again;
  again.force = true;
  auto second = RunSweep(
      Spec(R"({"dff": [{"hidden": 4096, "window": 4}], "measure": {"race": {"enabled": false}}})"),
      backend, *db, again);
  ASSERT_TRUE(second.ok()) << second.status();
  auto answer = Answer(*db, true);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->rows.front().runs.front().job_id, second->job.id);
  EXPECT_FALSE(answer->race.has_value()) << "the race timed the first run's algorithms";
  EXPECT_EQ(RowOf(*answer, 10918).tie_group, 1);
}

TEST_F(StudyRaces, TheFirstChoicesAnswerIsRacedAsItsOwnRaceWhenAsked) {
  backend.first_choice_slower = true;  // cuBLASLt's first choice: algorithm 21, not 20
  auto out = RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 4}],
                               "measure": {"race": {"algos": ["best", "default"]}}})"),
                      backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->races.size(), 2u);
  const StudyRaceReport& best = out->races[0];
  const StudyRaceReport& first = out->races[1];
  EXPECT_EQ(best.algo, tuner::AlgoChoice::kBest);
  EXPECT_EQ(first.algo, tuner::AlgoChoice::kDefault);
  ASSERT_GT(best.race_id, 0) << best.why_not;
  ASSERT_GT(first.race_id, 0) << first.why_not;
  EXPECT_NE(best.race_id, first.race_id);
  for (const auto& algos : backend.raced_algos) {  // the last race's
    EXPECT_EQ(algos, (std::vector<int64_t>{21, 21})) << "each GEMM with the run's first choice";
  }
  EXPECT_NE(DescribeRace(first).find("(cuBLASLt's first-choice algorithms)"), std::string::npos)
      << DescribeRace(first);
  EXPECT_EQ(DescribeRace(best).find("first-choice"), std::string::npos);
  EXPECT_NE(DescribeRace(best).find(" measured on " + backend.Device().name +
                                    " GPU-fake-0, "
                                    "cuBLASLt 130100; "),
            std::string::npos)
      << "a race's figures name their device and software: " << DescribeRace(best);
  auto by_best = Answer(*db, true, tuner::AlgoChoice::kBest);
  auto by_first = Answer(*db, true, tuner::AlgoChoice::kDefault);
  ASSERT_TRUE(by_best.ok() && by_first.ok()) << by_first.status();
  ASSERT_TRUE(by_best->race.has_value()) << by_best->race_note;
  ASSERT_TRUE(by_first->race.has_value()) << by_first->race_note;
  EXPECT_EQ(by_best->race->race_id, best.race_id);
  EXPECT_EQ(by_first->race->race_id, first.race_id) << "each answer ordered by its own race";
}

TEST_F(StudyRaces, ACancelledRaceLeavesTheJobDoneAndStoresNothing) {
  std::atomic<bool> cancel{false};
  SweepOptions options;
  options.cancel = &cancel;
  options.on_stage = [&](std::string_view) { cancel = true; };  // cancelled as the race starts
  auto out = RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 4}]})"), backend, *db, options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->job.state, store::JobState::kDone) << "every GEMM was measured";
  ASSERT_EQ(out->races.size(), 1u);
  EXPECT_EQ(out->races.front().race_id, 0);
  EXPECT_NE(out->races.front().why_not.find("stopped"), std::string::npos)
      << out->races.front().why_not;
  auto answer = Answer(*db, true);
  ASSERT_TRUE(answer.ok());
  EXPECT_FALSE(answer->race.has_value());
}

}  // namespace
}  // namespace crest::sweep
