// Results (results.cc, run_bests.cc): runs and their bests, predictions,
// measurements, the generation that moves with them, lookups.

#include <map>
#include <set>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::AddPrediction;
using crest::store_tests::EmptyDffJob;
using crest::store_tests::Gemm;
using crest::store_tests::kDefaultMode;
using crest::store_tests::NewestRow;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

TEST(StoreRuns, EachJobOnEachDeviceIsARunWithItsOwnBestAndItsNameAndSurvivesAMerge) {
  TempDir dir;
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  const GemmKey key = GemmKey::Of(g);
  std::vector<std::string> snapshots;
  for (const char* host : {"node1", "node2"}) {
    store::StoreOptions options;
    options.host = host;
    auto db = OpenOk(dir.File(std::string(host) + ".db"), options);
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                  crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    // Two jobs on each node: the first fast, the second slow; each run's
    // best is its own fastest verified algorithm (FakeMeasurement: the
    // unverified index 1 is fastest of all, and never a best).
    for (double base : {500.0, 800.0}) {
      JobRecord job = EmptyDffJob();
      job.spec = R"({"name":"run-)" + std::to_string(static_cast<int>(base)) + R"("})";
      auto created = db->CreateJob(job);
      ASSERT_TRUE(created.ok());
      ASSERT_TRUE(db->InsertMeasurement(created->id, ids->first, ids->second, "H100-SXM", 132,
                                        crest::testing::FakeMeasurement(g, base, 3, 1))
                      .ok());
    }
    auto versions = db->SoftwareVersions({});
    ASSERT_TRUE(versions.ok() && versions->size() == 1u);
    auto runs = db->RunBests("H100-SXM", {&key, 1}, versions->front(), kDefaultMode);
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ(runs->at(key).size(), 2u);
    std::map<int64_t, double> by_job;
    std::vector<RunKey> keys;
    for (const RunBest& b : runs->at(key)) {
      by_job[b.run.job_id] = b.median_us;
      keys.push_back(b.run);
      EXPECT_NEAR(b.ci_low_us, 0.99 * b.median_us, 1e-9);
    }
    EXPECT_EQ(by_job, (std::map<int64_t, double>{{1, 500}, {2, 800}}))
        << "each run its own best, never the other run's";
    auto records = db->DescribeRuns(keys);
    ASSERT_TRUE(records.ok()) << records.status();
    for (const RunRecord& r : *records) {
      EXPECT_EQ(r.info.name, r.key.job_id == 1 ? "run-500" : "run-800");
      EXPECT_EQ(r.info.device_uuid, std::string("GPU-") + host);
      EXPECT_EQ(r.info.host, host);
      EXPECT_EQ(r.info.job_uid.size(), 32u);
      EXPECT_GT(r.info.started_us, 0);
      EXPECT_EQ(r.software.cublaslt, 130100);
    }
    store::SoftwarePin other;
    other.cublaslt = 120000;
    EXPECT_TRUE(db->SoftwareVersions(other)->empty()) << "the pin keeps other software out";
    EXPECT_TRUE(db->RunBests("H100-SXM", {&key, 1}, versions->front() + 1, kDefaultMode)->empty())
        << "another version's runs are not this one's";
    const std::string snapshot = dir.File(std::string(host) + ".snapshot");
    ASSERT_TRUE(store::ExportTo(*db, snapshot).ok());
    snapshots.push_back(snapshot);
  }
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) ASSERT_TRUE(store::MergeFrom(*catalogue, snapshot).ok());
  auto runs = catalogue->RunBests("H100-SXM", {&key, 1}, catalogue->SoftwareVersions({})->front(),
                                  kDefaultMode);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->at(key).size(), 4u) << "two runs on each of two nodes";
  std::vector<RunKey> keys;
  for (const RunBest& b : runs->at(key)) keys.push_back(b.run);
  auto records = catalogue->DescribeRuns(keys);
  ASSERT_TRUE(records.ok());
  std::set<std::pair<std::string, std::string>> seen;
  for (const RunRecord& r : *records) seen.emplace(r.info.host, r.info.name);
  EXPECT_EQ(seen.size(), 4u) << "the merged jobs keep their names and nodes";
}

TEST(StoreSoftware, VersionsComeNewestCublasLtFirstThenRuntimeThenDriverAndPinsFilter) {
  TempDir dir;
  auto db = OpenOk(dir.File("s.db"));
  // Registered out of order; the driver is text, compared byte by byte.
  const tuner::SoftwareInfo versions[] = {{"590.10", 13010, 130000},
                                          {"575.99", 13000, 130100},
                                          {"600.01", 12090, 130100},
                                          {"580.12", 13000, 130100}};
  std::map<std::string, int64_t> id_of;
  for (const tuner::SoftwareInfo& sw : versions) {
    auto ids = db->RegisterDevice(crest::testing::FakeH100(), sw);
    ASSERT_TRUE(ids.ok()) << ids.status();
    id_of[sw.driver] = ids->second;
  }
  auto all = db->SoftwareVersions({});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::vector<int64_t>{id_of["580.12"], id_of["575.99"], id_of["600.01"],
                                        id_of["590.10"]}));
  SoftwarePin pin;
  pin.cuda_runtime = 13000;
  EXPECT_EQ(*db->SoftwareVersions(pin), (std::vector<int64_t>{id_of["580.12"], id_of["575.99"]}));
  pin.driver = "575.99";
  EXPECT_EQ(*db->SoftwareVersions(pin), (std::vector<int64_t>{id_of["575.99"]}));
}

TEST(StorePredictions, SameKeyIsStoredOnceAndFoundInBatches) {
  TempDir dir;
  auto db = OpenOk(dir.File("p.db"));
  std::vector<GemmKey> keys;
  for (int64_t k = 1000; k < 1100; ++k) {
    ASSERT_TRUE(AddPrediction(*db, Gemm(8192, 4096, k)).ok());
    keys.push_back(GemmKey::Of(Gemm(8192, 4096, k)));
  }
  for (int64_t n = 2000; n < 2100; ++n) {
    ASSERT_TRUE(AddPrediction(*db, Gemm(8192, n, 4096)).ok());
    keys.push_back(GemmKey::Of(Gemm(8192, n, 4096)));
  }
  ASSERT_TRUE(AddPrediction(*db, Gemm(8192, 4096, 1000)).ok());  // again
  EXPECT_EQ(store::Stats(*db)->predictions, 200);
  keys.push_back(GemmKey::Of(Gemm(1, 2, 3)));  // not stored
  // Stored under the version of the model in force (a calibrated one here).
  const std::string version = tuner::ModelVersionFor(**tuner::FindGpu("h100"), tuner::DType::kBf16);
  auto found = db->FindPredictions("H100-SXM", version, keys);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 200u);
  EXPECT_GT(found->begin()->second.expected_error, 0) << "the model's error is kept";
  EXPECT_TRUE(*db->HasPrediction("H100-SXM", version, keys[0]));
  EXPECT_FALSE(*db->HasPrediction("H100-SXM", "tilewave-0", keys[0]));
  EXPECT_FALSE(*db->HasPrediction("A100-SXM-80GB", version, keys[0]));
}

TEST(StoreMeasurements, TheNewestRunsAnswerIsItsFastestVerifiedRow) {
  TempDir dir;
  auto db = OpenOk(dir.File("m.db"));
  const tuner::GemmShape g = Gemm(8192, 4096, 11008);
  auto old_ids =
      db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(120900));
  auto new_ids =
      db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100));
  ASSERT_TRUE(old_ids.ok() && new_ids.ok());
  EXPECT_EQ(old_ids->first, new_ids->first) << "same device registered once";
  EXPECT_NE(old_ids->second, new_ids->second);
  // Older software was faster; the newer run (the larger software id, both
  // outside any job) is what answers read.
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, old_ids->first, old_ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 800))
                  .ok());
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, new_ids->first, new_ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 1000, 4, /*unverified=*/3))
                  .ok());
  const GemmKey key = GemmKey::Of(g);
  auto best = NewestRow(*db, "H100-SXM", key);
  ASSERT_TRUE(best.ok() && best->has_value());
  const MeasurementRow& row = **best;
  EXPECT_EQ(row.software.cublaslt, 130100);
  EXPECT_DOUBLE_EQ(row.result.stats.median_us, 1000);  // the unverified 500 µs never wins
  EXPECT_TRUE(row.result.verified);
  EXPECT_EQ(row.result.algo.algo_id, 20);
  EXPECT_EQ(row.result.algo.bytes, (std::vector<uint8_t>{0, 1, 2, 3}));
  EXPECT_EQ(row.device.host, "node0");
  EXPECT_EQ(row.tiles, 32 * 32);
  EXPECT_EQ(row.waves, 8);
  auto pinned = NewestRow(*db, "H100-SXM", key, kDefaultMode, 120900);
  ASSERT_TRUE(pinned.ok() && pinned->has_value());
  EXPECT_DOUBLE_EQ((*pinned)->result.stats.median_us, 800);
  EXPECT_TRUE(*db->HasMeasurement(new_ids->first, new_ids->second, key, kDefaultMode));
  EXPECT_FALSE(*db->HasMeasurement(new_ids->first, new_ids->second, key,
                                   {tuner::CacheMode::kWarm, tuner::ClockPolicy::kSustained}));
  EXPECT_FALSE(*db->HasMeasurement(new_ids->first, new_ids->second, key,
                                   {tuner::CacheMode::kCold, tuner::ClockPolicy::kBurst}));
  EXPECT_EQ(store::Stats(*db)->measurements, 3 + 4);
  EXPECT_EQ(store::Stats(*db)->verified_measurements, 3 + 3);
}

// Answers are cached by a GPU's generation: it moves with every result for
// that GPU, whoever writes it, and not with another GPU's.
TEST(StoreGeneration, MovesWithEveryResultForItsGpuOnly) {
  TempDir dir;
  auto db = OpenOk(dir.File("g.db"));
  EXPECT_EQ(*db->Generation("H100-SXM"), ResultsGeneration{});
  auto ids = db->RegisterDevice(crest::testing::FakeH100("GPU-1", "node1"),
                                crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 500))
                  .ok());
  const ResultsGeneration after_measurement = *db->Generation("H100-SXM");
  EXPECT_GT(after_measurement.measurement_id, 0);
  auto p = tuner::Predict(g, **tuner::FindGpu("a100"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(db->InsertPrediction(std::nullopt, "A100-SXM-80GB", g, *p).ok());
  EXPECT_EQ(*db->Generation("H100-SXM"), after_measurement) << "another GPU's write";
  EXPECT_GT(db->Generation("A100-SXM-80GB")->prediction_id, 0);
  // Another connection's write moves it too.
  auto other = OpenOk(dir.File("g.db"));
  ASSERT_TRUE(
      other->InsertPrediction(std::nullopt, "H100-SXM", g, *Predict(g, **tuner::FindGpu("h100")))
          .ok());
  EXPECT_GT(db->Generation("H100-SXM")->prediction_id, 0);
}

}  // namespace
}  // namespace crest::store
