// The store's two newer answers: a GEMM's row of cuBLASLt's first choice
// (AlgoChoice::kDefault) beside its fastest, and the races of a study.
#include <sqlite3.h>

#include "crest/store/admin.h"
#include "crest/store/schema_version.h"
#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::Gemm;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

constexpr tuner::MeasureMode kDefaultMode{};

// A job whose spec says whether its algorithms came from the exhaustive grid.
int64_t NewJob(Store& db, bool exhaustive) {
  JobRecord job;
  job.spec =
      exhaustive ? R"({"measure":{"exhaustive":true},"name":"grid"})" : R"({"name":"heuristic"})";
  job.backend = "cublaslt";
  job.target = "GPU-1";
  auto created = db.CreateJob(job);
  EXPECT_TRUE(created.ok()) << created.status();
  return created.ok() ? created->id : 0;
}

// Three algorithms at 500, 550 and 600 µs, the heuristic's first choice the
// slowest (FakeMeasurement makes the first the fastest).
tuner::MeasuredGemm FirstChoiceSlowest(const tuner::GemmShape& g) {
  tuner::MeasuredGemm m = crest::testing::FakeMeasurement(g, 500, 3);
  for (size_t i = 0; i < m.algos.size(); ++i) {
    m.algos[i].heuristic_rank = static_cast<int>(m.algos.size() - 1 - i);
  }
  return m;
}

TEST(StoreAlgoChoice, DefaultAnswersWithTheHeuristicsFirstChoiceBestWithTheFastest) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  const GemmKey key = GemmKey::Of(g);
  const int64_t job = NewJob(*db, false);
  ASSERT_TRUE(
      db->InsertMeasurement(job, ids->first, ids->second, "H100-SXM", 132, FirstChoiceSlowest(g))
          .ok());
  const int64_t software = db->SoftwareVersions({})->front();
  auto best = db->RunBests("H100-SXM", {&key, 1}, software, kDefaultMode, tuner::AlgoChoice::kBest);
  auto first =
      db->RunBests("H100-SXM", {&key, 1}, software, kDefaultMode, tuner::AlgoChoice::kDefault);
  ASSERT_TRUE(best.ok() && first.ok());
  ASSERT_EQ(best->at(key).size(), 1u);
  ASSERT_EQ(first->at(key).size(), 1u);
  EXPECT_DOUBLE_EQ(best->at(key).front().median_us, 500);
  EXPECT_DOUBLE_EQ(first->at(key).front().median_us, 600) << "the first choice, not the fastest";
  EXPECT_EQ(first->at(key).front().run.job_id, job);
  auto row = db->GetMeasurement(first->at(key).front().measurement_id);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->result.heuristic_rank, 0);
  // Read as the one run it is, the same choice and figures.
  const store::RunKey run = first->at(key).front().run;
  auto alone =
      db->RunBestsOf("H100-SXM", run, {&key, 1}, kDefaultMode, tuner::AlgoChoice::kDefault);
  ASSERT_TRUE(alone.ok() && (*alone)[0]);
  EXPECT_DOUBLE_EQ((*alone)[0]->median_us, 600);
  EXPECT_EQ((*alone)[0]->measurement_id, first->at(key).front().measurement_id);
  auto fastest = db->RunBestsOf("H100-SXM", run, {&key, 1}, kDefaultMode, tuner::AlgoChoice::kBest);
  ASSERT_TRUE(fastest.ok() && (*fastest)[0]);
  EXPECT_DOUBLE_EQ((*fastest)[0]->median_us, 500);

  // The exhaustive search's rows are no one's first choice.
  const tuner::GemmShape h = Gemm(4096, 4096, 8192);
  const GemmKey other = GemmKey::Of(h);
  tuner::MeasuredGemm grid = crest::testing::FakeMeasurement(h, 500, 3);
  for (tuner::AlgoResult& a : grid.algos) a.heuristic_rank = -1;
  ASSERT_TRUE(
      db->InsertMeasurement(NewJob(*db, true), ids->first, ids->second, "H100-SXM", 132, grid)
          .ok());
  auto none =
      db->RunBests("H100-SXM", {&other, 1}, software, kDefaultMode, tuner::AlgoChoice::kDefault);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->contains(other));
  EXPECT_TRUE(db->RunBests("H100-SXM", {&other, 1}, software, kDefaultMode)->contains(other));
}

TEST(StoreAlgoChoice, UpgradingFromVersion9PlacesRowsInTheOrderTheEngineWroteThem) {
  TempDir dir;
  const std::string path = dir.File("v9.db");
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  const tuner::GemmShape h = Gemm(4096, 4096, 8192);
  {
    auto db = OpenOk(path);
    auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                  crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    ASSERT_TRUE(db->InsertMeasurement(NewJob(*db, false), ids->first, ids->second, "H100-SXM", 132,
                                      crest::testing::FakeMeasurement(g, 500, 3))
                    .ok());
    ASSERT_TRUE(db->InsertMeasurement(NewJob(*db, true), ids->first, ids->second, "H100-SXM", 132,
                                      crest::testing::FakeMeasurement(h, 500, 3))
                    .ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string downgrade =
      std::string(store_tests::kDowngradeTo9) + "PRAGMA user_version = 9;";
  ASSERT_EQ(sqlite3_exec(raw, downgrade.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  auto db = OpenOk(path);  // upgrades to the current schema
  ASSERT_EQ(store::Check(*db)->schema_version, kSchemaVersion);
  std::vector<int> heuristic;
  std::vector<int> grid;
  for (int64_t id = 1; id <= 6; ++id) {
    auto row = db->GetMeasurement(id);
    ASSERT_TRUE(row.ok()) << row.status();
    (row->key == GemmKey::Of(g) ? heuristic : grid).push_back(row->result.heuristic_rank);
  }
  EXPECT_EQ(heuristic, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(grid, (std::vector<int>{-1, -1, -1})) << "an exhaustive job's rows are not ranked";
}

RaceRecord SomeRace(int64_t job, int64_t device, int64_t software, std::string study,
                    double leader_us) {
  RaceRecord race;
  race.job_id = job;
  race.device_id = device;
  race.software_id = software;
  race.gpu_model = "H100-SXM";
  race.study = std::move(study);
  race.resolution = 0.01;
  race.rounds = 2;
  race.stop_reason = "resolved";
  race.settled = true;
  race.entries = {
      {1, 11008, tuner::RaceVerdict::kLeader, 1, 2, leader_us, 1, 1, 1},
      {0, 10944, tuner::RaceVerdict::kSlower, 2, 1, 1.05 * leader_us, 1.05, 1.04, 1.06}};
  race.times = {{1.05 * leader_us, leader_us}, {0, leader_us}};
  return race;
}

TEST(StoreRaces, ARunsNewestRaceOfAStudyComesBackWithItsStandingsAndTimes) {
  TempDir dir;
  auto db = OpenOk(dir.File("r.db"));
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const std::string study = "dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused";
  const int64_t job = NewJob(*db, false);
  ASSERT_TRUE(db->InsertRace(SomeRace(job, ids->first, ids->second, study, 900)).ok());
  auto second = db->InsertRace(SomeRace(job, ids->first, ids->second, study, 1000));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(db->InsertRace(SomeRace(job, ids->first, ids->second, "another study", 800)).ok());
  const int64_t other_job = NewJob(*db, false);
  ASSERT_TRUE(db->InsertRace(SomeRace(other_job, ids->first, ids->second, study, 700)).ok());

  auto race = db->FindRace(job, "GPU-1", study, kDefaultMode, tuner::AlgoChoice::kBest, true);
  ASSERT_TRUE(race.ok()) << race.status();
  ASSERT_TRUE(race->has_value());
  const RaceRecord& r = **race;
  EXPECT_EQ(r.id, *second);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].value, 11008);
  EXPECT_EQ(r.entries[0].verdict, tuner::RaceVerdict::kLeader);
  EXPECT_EQ(r.entries[1].verdict, tuner::RaceVerdict::kSlower);
  EXPECT_DOUBLE_EQ(r.entries[0].median_us, 1000);
  EXPECT_DOUBLE_EQ(r.entries[1].ratio_low, 1.04);
  EXPECT_EQ(r.times, (std::vector<std::vector<double>>{{1050, 1000}, {0, 1000}}))
      << "a candidate not timed in a round reads back as 0";

  tuner::MeasureMode burst;
  burst.clocks = tuner::ClockPolicy::kBurst;
  EXPECT_EQ(r.gpu_model, "H100-SXM");
  EXPECT_FALSE(
      db->FindRace(job, "GPU-1", study, burst, tuner::AlgoChoice::kBest, false)->has_value())
      << "another mode's race does not answer";
  EXPECT_FALSE(db->FindRace(job, "GPU-1", study, kDefaultMode, tuner::AlgoChoice::kDefault, false)
                   ->has_value())
      << "nor one run with the other algorithm choice";
  EXPECT_FALSE(db->FindRace(job + 7, "GPU-1", study, kDefaultMode, tuner::AlgoChoice::kBest, false)
                   ->has_value())
      << "nor another job's";
  EXPECT_FALSE(
      db->FindRace(job, "GPU-2", study, kDefaultMode, tuner::AlgoChoice::kBest, false)->has_value())
      << "nor another device's";
}

// A verdict is stored as its word; a word this build does not know (a
// hand edit, a newer crest) is an error naming the field, never a verdict.
TEST(StoreRaces, AnUnknownStoredVerdictIsRefusedNamingTheField) {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto db = OpenOk(path);
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const int64_t job = NewJob(*db, false);
  ASSERT_TRUE(db->InsertRace(SomeRace(job, ids->first, ids->second, "s", 900)).ok());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE race_entries SET verdict = 'faster' WHERE value = 10944",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto race = db->FindRace(job, "GPU-1", "s", kDefaultMode, tuner::AlgoChoice::kBest, false);
  ASSERT_FALSE(race.ok());
  EXPECT_EQ(race.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(race.status().message().find("race_entries.verdict 'faster'"), std::string::npos)
      << race.status();
}

TEST(StoreRaces, ARaceMovesItsGpuModelsGenerationSoCachedAnswersGo) {
  TempDir dir;
  auto db = OpenOk(dir.File("g.db"));
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const int64_t job = NewJob(*db, false);
  ASSERT_TRUE(db->InsertMeasurement(job, ids->first, ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(Gemm(4096, 4096, 4096), 500))
                  .ok());
  auto before = db->Generation("H100-SXM");
  auto other_before = db->Generation("A100-SXM");
  ASSERT_TRUE(before.ok() && other_before.ok());
  auto race = db->InsertRace(SomeRace(job, ids->first, ids->second, "dff hidden=4096", 1000));
  ASSERT_TRUE(race.ok());
  auto after = db->Generation("H100-SXM");
  ASSERT_TRUE(after.ok());
  EXPECT_NE(*after, *before) << "an answer cached before the race would be served without it";
  EXPECT_EQ(after->race_id, *race);
  EXPECT_EQ(*db->Generation("A100-SXM"), *other_before) << "another GPU's answers stay";
  EXPECT_EQ(db->LatestGeneration()->race_id, *race);
}

TEST(StoreRaces, AMergeCarriesARaceWithItsRunRemappedAndOnlyOnce) {
  TempDir dir;
  const std::string study = "dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused";
  std::string snapshot = dir.File("node1.snapshot");
  {
    store::StoreOptions options;
    options.host = "node1";
    auto node = OpenOk(dir.File("node1.db"), options);
    auto ids = node->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                    crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    const int64_t job = NewJob(*node, false);
    ASSERT_TRUE(node->InsertRace(SomeRace(job, ids->first, ids->second, study, 1000)).ok());
    ASSERT_TRUE(store::ExportTo(*node, snapshot).ok());
  }
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  for (int i = 0; i < 3; ++i) NewJob(*catalogue, false);  // its own jobs: the ids differ
  auto first = store::MergeFrom(*catalogue, snapshot);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->races, 1);
  EXPECT_EQ(store::MergeFrom(*catalogue, snapshot)->races, 0) << "merged again: nothing new";
  auto jobs = catalogue->ListJobs({});
  ASSERT_TRUE(jobs.ok());
  const int64_t merged_job = jobs->front().id;  // newest first: the merged one
  EXPECT_EQ(merged_job, 4);
  auto race =
      catalogue->FindRace(merged_job, "GPU-1", study, kDefaultMode, tuner::AlgoChoice::kBest, true);
  ASSERT_TRUE(race.ok() && race->has_value());
  EXPECT_EQ((*race)->entries.size(), 2u);
  EXPECT_EQ((*race)->times, (std::vector<std::vector<double>>{{1050, 1000}, {0, 1000}}));
}

}  // namespace
}  // namespace crest::store
