// Upgrades of older databases (schema.cc): every row kept, and what each
// migration derives.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "crest/store/admin.h"
#include "crest/store/schema_version.h"
#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::Exec;
using crest::store_tests::Gemm;
using crest::store_tests::kDefaultMode;
using crest::store_tests::NewestRow;
using crest::store_tests::OpenOk;
using crest::store_tests::QueryNumber;
using crest::testing::ReadBytes;
using crest::testing::TempDir;
using crest::testing::WriteBytes;

TEST(StoreSchema, UpgradingFromVersion2KeepsEachDevicesBest) {
  TempDir dir;
  const std::string path = dir.File("v2.db");
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  {
    auto db = OpenOk(path);
    for (const char* host : {"node1", "node2", "node3"}) {
      auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                    crest::testing::FakeSoftware());
      ASSERT_TRUE(ids.ok());
      ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                        crest::testing::FakeMeasurement(g, host[4] == '1'   ? 500
                                                                           : host[4] == '2' ? 600
                                                                                            : 700))
                      .ok());
    }
  }
  // Back to version 2 as that version wrote it: the measurement tables are
  // the same; version 2 kept one best row per GPU model and had no answers.
  const std::string downgrade = std::string(store_tests::kDowngradeTo9) + R"sql(
    DROP TRIGGER measurements_deleted;
    DROP TRIGGER predictions_deleted;
    ALTER TABLE jobs DROP COLUMN submitted_by;
    ALTER TABLE measurements DROP COLUMN clock_policy;
    ALTER TABLE measurements DROP COLUMN ci_low_us;
    ALTER TABLE measurements DROP COLUMN ci_high_us;
    ALTER TABLE measurements DROP COLUMN power_w;
    ALTER TABLE measurements DROP COLUMN throttle_reasons;
    ALTER TABLE measurements DROP COLUMN discarded;
    ALTER TABLE measurements DROP COLUMN clock_note;
    ALTER TABLE measurements DROP COLUMN settled_clock_mhz;
    ALTER TABLE predictions DROP COLUMN expected_error;
    DROP INDEX jobs_by_spec_state;
    DROP TRIGGER job_counts_insert;
    DROP TRIGGER job_counts_update;
    DROP TRIGGER job_counts_delete;
    DROP TABLE job_counts;
    DROP TRIGGER measurements_move_generation;
    DROP TRIGGER predictions_move_generation;
    DROP TABLE generations;
    DROP TABLE imported;
    DROP TABLE run_bests;
    DROP TABLE best_answers;
    DROP TABLE best_measurements;
    CREATE TABLE best_measurements(
      gpu_model TEXT NOT NULL, software_id INTEGER NOT NULL, dtype TEXT NOT NULL,
      trans_a INTEGER NOT NULL, trans_b INTEGER NOT NULL, batch INTEGER NOT NULL,
      m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, device_id INTEGER NOT NULL,
      measurement_id INTEGER NOT NULL, median_us REAL NOT NULL,
      PRIMARY KEY(gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k)) WITHOUT ROWID;
    INSERT INTO best_measurements
      SELECT gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id, id,
             min(median_us)
      FROM measurements WHERE verified = 1
      GROUP BY gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k;
    PRAGMA user_version = 2;)sql";
  ASSERT_EQ(Exec(path, downgrade), "");

  auto db = OpenOk(path);  // upgrades to the current schema
  EXPECT_EQ(store::Check(*db)->schema_version, kSchemaVersion);
  const GemmKey key = GemmKey::Of(g);
  // Rows of versions before 4 were taken under the old burst clock rule.
  const tuner::MeasureMode burst{tuner::CacheMode::kCold, tuner::ClockPolicy::kBurst};
  // Each device's rows (written outside any job) are one run each, with
  // that device's best.
  const int64_t software = db->SoftwareVersions({})->front();
  auto runs = db->RunBests("H100-SXM", {&key, 1}, software, burst);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->at(key).size(), 3u);
  std::multiset<double> medians;
  for (const RunBest& b : runs->at(key)) {
    EXPECT_EQ(b.run.job_id, 0);
    medians.insert(b.median_us);
  }
  EXPECT_EQ(medians, (std::multiset<double>{500, 600, 700}));
  EXPECT_TRUE(db->RunBests("H100-SXM", {&key, 1}, software, kDefaultMode)->empty())
      << "a burst row answered a sustained query";
  const int64_t newest = QueryNumber(path, "SELECT max(id) FROM measurements");
  EXPECT_GT(newest, 0);
  EXPECT_EQ(db->Generation("H100-SXM")->measurement_id, newest) << "the upgrade fills generations";
}

// Version 14 drops the first answer rule's tables (each device's best, the
// median device), which no answer read; a deleted measurement still takes
// its run's best with it, found again from the rows that remain.
TEST(StoreSchema, TheDormantBestTablesAreGoneAndADeletedRowStillLeavesItsRunsBest) {
  TempDir dir;
  const std::string path = dir.File("d.db");
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  const GemmKey key = GemmKey::Of(g);
  auto db = OpenOk(path);
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  for (double us : {500.0, 600.0}) {
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                      crest::testing::FakeMeasurement(g, us, 1))
                    .ok());
  }
  const RunKey run{0, ids->first, ids->second};
  const auto best = [&] {
    auto b = db->RunBestsOf("H100-SXM", run, {&key, 1}, kDefaultMode);
    return b.ok() && b->front() ? b->front()->median_us : -1.0;
  };
  EXPECT_DOUBLE_EQ(best(), 500);
  EXPECT_EQ(QueryNumber(path,
                        "SELECT count(*) FROM sqlite_master WHERE name IN ('best_measurements', "
                        "'best_answers')"),
            0);
  ASSERT_EQ(Exec(path, "DELETE FROM measurements WHERE median_us = 500"), "");
  EXPECT_DOUBLE_EQ(best(), 600) << "the run's best is the fastest row left";
  EXPECT_TRUE(store::Check(*db)->ok);
}

// The rows of run_rows (by run id) that run_bests does not hold, plus those
// of run_bests that run_rows does not: 0 when run_rows mirrors run_bests.
int64_t RunRowsOutOfStep(const std::string& path) {
  constexpr const char* kBests =
      "SELECT gpu_model, cache_mode, clock_policy, software_id, job_id, device_id, dtype, "
      "trans_a, trans_b, batch, m, n, k, measurement_id, median_us, ci_low_us, ci_high_us ";
  const std::string by_run = std::string(kBests) + "FROM run_rows JOIN run_ids ON id = run_id";
  const std::string bests = std::string(kBests) + "FROM run_bests";
  return QueryNumber(path, "SELECT (SELECT count(*) FROM (" + by_run + " EXCEPT " + bests +
                               ")) + (SELECT count(*) FROM (" + bests + " EXCEPT " + by_run + "))");
}

// Version 15 keys each run's bests by an integer run id (run_rows), which
// one run's answers read: kept by triggers from run_bests through a new
// run, a faster row, a slower one, a deleted row, and filled by the upgrade.
TEST(StoreSchema, RunRowsHoldRunBestsByRunIdThroughEveryWriteAndTheUpgrade) {
  TempDir dir;
  const std::string path = dir.File("r.db");
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  const GemmKey key = GemmKey::Of(g);
  auto db = OpenOk(path);
  std::vector<RunKey> runs;
  for (const char* host : {"node1", "node2"}) {
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                  crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    runs.push_back(RunKey{0, ids->first, ids->second});
  }
  const auto insert = [&](const RunKey& run, double us) {
    return db
        ->InsertMeasurement(std::nullopt, run.device_id, run.software_id, "H100-SXM", 132,
                            crest::testing::FakeMeasurement(g, us, 1))
        .ok();
  };
  const auto best = [&](const RunKey& run) {
    auto b = db->RunBestsOf("H100-SXM", run, {&key, 1}, kDefaultMode);
    return b.ok() && b->front() ? b->front()->median_us : -1.0;
  };
  ASSERT_TRUE(insert(runs[0], 600));  // a new run
  ASSERT_TRUE(insert(runs[1], 700));
  EXPECT_EQ(RunRowsOutOfStep(path), 0) << "after new runs";
  ASSERT_TRUE(insert(runs[0], 500));  // faster: run_bests' row is updated
  ASSERT_TRUE(insert(runs[0], 800));  // slower: nothing changes
  EXPECT_EQ(RunRowsOutOfStep(path), 0) << "after a faster and a slower row";
  EXPECT_DOUBLE_EQ(best(runs[0]), 500);
  EXPECT_DOUBLE_EQ(best(runs[1]), 700);
  ASSERT_EQ(Exec(path, "DELETE FROM measurements WHERE median_us = 500"), "");
  EXPECT_EQ(RunRowsOutOfStep(path), 0) << "after a deleted row";
  EXPECT_DOUBLE_EQ(best(runs[0]), 600) << "the run's best is the fastest row left";
  ASSERT_EQ(Exec(path, "DELETE FROM measurements WHERE median_us = 700"), "");
  EXPECT_EQ(RunRowsOutOfStep(path), 0) << "after a run's last row went";
  EXPECT_DOUBLE_EQ(best(runs[1]), -1.0) << "a run without rows answered";
  auto listed = db->ListRuns("H100-SXM", runs[0].software_id, kDefaultMode);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u) << "a run whose rows all went is listed";
  EXPECT_EQ(listed->front().run, runs[0]);
  db.reset();

  // Back to version 14 as it wrote it, with a row run_rows never saw.
  ASSERT_EQ(Exec(path, R"sql(
    DROP TABLE run_packs;
    DROP TRIGGER run_bests_inserted;
    DROP TRIGGER run_bests_deleted;
    DROP TRIGGER run_bests_updated;
    DROP TABLE run_rows;
    DROP TABLE run_ids;
    CREATE INDEX run_bests_by_run ON run_bests(gpu_model, cache_mode, clock_policy, software_id,
        job_id, device_id, dtype, trans_a, trans_b, batch, m, n, k, measurement_id, median_us,
        ci_low_us, ci_high_us);
    UPDATE run_bests SET median_us = 550;
    PRAGMA user_version = 14;)sql"),
            "");
  db = OpenOk(path);  // upgrades to the current schema
  EXPECT_EQ(store::Check(*db)->schema_version, kSchemaVersion);
  EXPECT_TRUE(store::Check(*db)->ok);
  EXPECT_EQ(RunRowsOutOfStep(path), 0) << "after the upgrade";
  EXPECT_DOUBLE_EQ(best(runs[0]), 550) << "the upgrade did not fill run_rows from run_bests";
  EXPECT_EQ(db->ListRuns("H100-SXM", runs[0].software_id, kDefaultMode)->size(), 1u);
}

TEST(StoreSchema, TheFirstGpuRunsDatabaseUpgradesAndItsRowsSayHowTheyWereMeasured) {
  TempDir dir;
  const std::string path = dir.File("seed-bmm.db");
  WriteBytes(path,
             ReadBytes(std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/crest-seed-bmm.db"));
  auto db = OpenOk(path);
  EXPECT_EQ(store::Check(*db)->schema_version, kSchemaVersion);
  EXPECT_TRUE(store::Check(*db)->ok);
  const DbStats stats = *store::Stats(*db);
  EXPECT_EQ(stats.measurements, 120) << "rows were lost in the upgrade";
  EXPECT_EQ(stats.verified_measurements, 86);
  tuner::GemmShape bmm = Gemm(4096, 4096, 10820);
  bmm.batch = 4;
  bmm.dtype = tuner::DType::kFp16;
  bmm.b_transposed = false;  // the common script's row-major NN
  const GemmKey key = GemmKey::Of(bmm);
  auto burst =
      NewestRow(*db, "H100-SXM", key, {tuner::CacheMode::kCold, tuner::ClockPolicy::kBurst});
  ASSERT_TRUE(burst.ok() && burst->has_value());
  const MeasurementRow& row = **burst;
  EXPECT_EQ(row.mode.clocks, tuner::ClockPolicy::kBurst);
  EXPECT_GT(row.result.stats.median_us, 0);
  EXPECT_EQ(row.result.stats.ci_high_us, 0) << "an interval invented for an old row";
  EXPECT_FALSE(NewestRow(*db, "H100-SXM", key)->has_value());
}

}  // namespace
}  // namespace crest::store
