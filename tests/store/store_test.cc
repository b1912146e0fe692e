#include "crest/store/store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "fake_env.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "readonly_vfs.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::Gemm;
using crest::store_tests::OpenOk;
using crest::testing::ReadBytes;
using crest::testing::TempDir;
using crest::testing::WriteBytes;

// Cold L2 and sustained clocks: the engine's default and what lookups read.
constexpr MeasureMode kDefaultMode{};

void SetUserVersion(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, ("PRAGMA user_version=" + std::to_string(version)).c_str(), nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
}

absl::Status AddPrediction(Store& db, const GemmShape& g) {
  auto p = Predict(g, **FindGpu("h100"));
  if (!p.ok()) return p.status();
  return db.InsertPrediction(std::nullopt, "H100-SXM", g, *p).status();
}

TEST(StoreOpen, CreatesTheCurrentSchemaInWalMode) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  ASSERT_NE(db, nullptr);
  auto check = db->Check();
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok);
  EXPECT_EQ(check->schema_version, kSchemaVersion);
  EXPECT_EQ(access(dir.File("a.db-wal").c_str(), F_OK), 0) << "WAL file expected";
}

TEST(StoreOpen, UpgradesAnOlderFileAndKeepsItsRows) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    StoreOptions v1;
    v1.migrate_to_for_test = 1;
    OpenOk(path, v1);
  }
  {  // a prediction as version 1 wrote it
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "INSERT INTO predictions(uid, host, gpu_model, model_version, dtype, "
                           "trans_a, trans_b, m, n, k, batch, time_us, tflops, tile_m, tile_n, "
                           "tiles, waves, tile_efficiency, wave_efficiency, alignment_factor, "
                           "bound, created_us) VALUES ('u1', 'node0', 'H100-SXM', 'tilewave-1', "
                           "'bf16', 0, 1, 512, 512, 512, 1, 10, 13, 128, 128, 16, 1, 1, 0.12, 1, "
                           "'compute', 0)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }
  auto db = OpenOk(path);
  auto stats = db->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->schema_version, kSchemaVersion);
  EXPECT_EQ(stats->predictions, 1);
  JobRecord job;
  job.spec = "{}";
  job.backend = "model";
  job.target = "H100-SXM";
  auto created = db->CreateJob(job);  // uses the v2 priority column
  ASSERT_TRUE(created.ok()) << created.status();
}

TEST(StoreOpen, JobsCarryTheHostAndTheTimeOfTheStoresEnv) {
  TempDir dir;
  testing::FakeEnv env;
  env.SetHostName("env-node");
  env.SetNow(1'800'000'000.25);
  StoreOptions options;
  options.env = &env;
  auto db = Store::Open(dir.File("env.db"), options);
  ASSERT_TRUE(db.ok()) << db.status();
  JobRecord job;
  job.spec = "{}";
  job.backend = "model";
  auto created = (*db)->CreateJob(job);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->host, "env-node");
  auto read = (*db)->GetJob(created->id);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->host, "env-node");
  EXPECT_EQ(read->created_us, 1'800'000'000'250'000);
}

TEST(StoreOpen, ReadOnlyOpenOfAnOlderFileSaysHowToUpgrade) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    StoreOptions v1;
    v1.migrate_to_for_test = 1;
    OpenOk(path, v1);
  }
  StoreOptions ro;
  ro.read_only = true;
  auto db = Store::Open(path, ro);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(std::string(db.status().message()).find("older than this crest's"), std::string::npos)
      << db.status();
}

TEST(StoreOpen, RefusesANewerSchemaAndLeavesTheFileAsItWas) {
  TempDir dir;
  const std::string path = dir.File("new.db");
  OpenOk(path).reset();
  SetUserVersion(path, kSchemaVersion + 7);
  const std::string before = ReadBytes(path);
  for (bool read_only : {false, true}) {
    StoreOptions options;
    options.read_only = read_only;
    auto db = Store::Open(path, options);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(db.status().message());
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("newer than this crest supports"), std::string::npos) << message;
  }
  EXPECT_TRUE(ReadBytes(path) == before) << "the file changed";
}

TEST(StoreOpen, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  WriteBytes(path, std::string(8192, 'x') + "these are my notes, not a database\n");
  const std::string before = ReadBytes(path);
  auto db = Store::Open(path);
  ASSERT_FALSE(db.ok());
  const std::string message(db.status().message());
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a Crest database"), std::string::npos) << message;
  EXPECT_TRUE(ReadBytes(path) == before) << "the file changed";
  EXPECT_NE(access((path + "-wal").c_str(), F_OK), 0);
}

TEST(StoreOpen, RefusesSomeoneElsesSqliteDatabase) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE invoices(id INTEGER)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  const std::string before = ReadBytes(path);
  auto db = Store::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(std::string(db.status().message()).find("not a Crest database"), std::string::npos);
  EXPECT_TRUE(ReadBytes(path) == before) << "the file changed";
}

TEST(StoreOpen, ReadOnlyOpenNeverCreatesAFile) {
  TempDir dir;
  StoreOptions ro;
  ro.read_only = true;
  auto db = Store::Open(dir.File("typo.db"), ro);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(access(dir.File("typo.db").c_str(), F_OK), 0);
}

TEST(StoreOpen, CorruptFileFailsCheckAndIsLeftAsItWas) {
  TempDir dir;
  const std::string path = dir.File("c.db");
  {
    StoreOptions options;
    options.synchronous_full = false;
    auto db = OpenOk(path, options);
    for (int i = 1; i <= 300; ++i) ASSERT_TRUE(AddPrediction(*db, Gemm(64 * i, 4096, 4096)).ok());
  }
  // Closing the last connection checkpointed the WAL into the main file.
  std::string bytes = ReadBytes(path);
  ASSERT_GT(bytes.size(), 8 * 4096u);
  for (size_t i = 2 * 4096; i < 6 * 4096; ++i) bytes[i] = static_cast<char>(i * 7);
  WriteBytes(path, bytes);
  StoreOptions ro;
  ro.read_only = true;
  auto db = Store::Open(path, ro);
  bool reported = !db.ok();
  if (db.ok()) {
    auto check = (*db)->Check();
    reported = !check.ok() || !check->ok;
  }
  EXPECT_TRUE(reported) << "corruption went unnoticed";
  EXPECT_TRUE(ReadBytes(path) == bytes) << "the file changed";
}

TEST(StoreWrite, ReadOnlyLocationRefusesWritesAndKeepsTheFile) {
  TempDir dir;
  const std::string path = dir.File("ro.db");
  OpenOk(path).reset();
  const std::string before = ReadBytes(path);
  StoreOptions options;
  options.vfs = crest::testing::ReadOnlyVfsName();
  auto db = Store::Open(path, options);
  if (db.ok()) {
    const absl::Status s = AddPrediction(**db, Gemm(128, 128, 128));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(std::string(s.message()).find(path), std::string::npos) << s;
  } else {
    EXPECT_NE(std::string(db.status().message()).find(path), std::string::npos) << db.status();
  }
  EXPECT_TRUE(ReadBytes(path) == before) << "the file changed";
  // A new file in a read-only location cannot be created at all.
  auto fresh = Store::Open(dir.File("new.db"), options);
  ASSERT_FALSE(fresh.ok());
  EXPECT_NE(std::string(fresh.status().message()).find(dir.File("new.db")), std::string::npos);
}

// A catalogue on a read-only share: a WAL-mode file, its writer gone (no
// -wal, no -shm), where SQLite may not create the shared-memory file. Every
// reader got "attempt to write a readonly database" before.
TEST(StoreRead, AWalFileOnAReadOnlyShareOpensForReading) {
  TempDir dir;
  const std::string path = dir.File("share.db");
  {
    auto db = OpenOk(path);
    ASSERT_TRUE(AddPrediction(*db, Gemm(128, 128, 128)).ok());
  }
  ASSERT_NE(access((path + "-wal").c_str(), F_OK), 0) << "a clean close leaves no log";
  const std::string before = ReadBytes(path);
  StoreOptions options;
  options.read_only = true;
  options.vfs = crest::testing::ReadOnlyVfsName();
  auto db = Store::Open(path, options);
  ASSERT_TRUE(db.ok()) << db.status();
  auto stats = (*db)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->predictions, 1);
  auto check = (*db)->Check();
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->ok);
  EXPECT_TRUE(ReadBytes(path) == before) << "the file changed";
}

// An audit found 7.3 MB on disk under a 3 MiB --max-db-bytes: the cap
// counted the file, not its write-ahead log.
TEST(StoreWrite, ACappedFileKeepsItsWriteAheadLogWithinAThirdOfTheCap) {
  TempDir dir;
  const std::string path = dir.File("capped.db");
  StoreOptions options;
  options.max_pages = 256;  // 1 MiB
  auto opened = Store::Open(path, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& db = **opened;
  absl::Status full;
  size_t largest_wal = 0;
  for (int64_t k = 64; full.ok() && k < 200000; ++k) {
    full = AddPrediction(db, Gemm(128, 128, k));
    std::error_code ec;
    largest_wal = std::max<size_t>(largest_wal, std::filesystem::file_size(path + "-wal", ec));
  }
  ASSERT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_LE(largest_wal, size_t{256} / 3 * 4096 + 64 * 1024) << "the log outgrew its share";
  EXPECT_LE(std::filesystem::file_size(path), size_t{256} * 4096);
}

TEST(StoreWrite, ReadOnlyDirectoryForAnOrdinaryUser) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not bind root";
  TempDir dir;
  const std::string sub = dir.File("locked");
  ASSERT_EQ(mkdir(sub.c_str(), 0555), 0);
  auto db = Store::Open(sub + "/a.db");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(StoreWrite, FullDiskFailsCleanlyAndKeepsCommittedRows) {
  TempDir dir;
  const std::string path = dir.File("full.db");
  StoreOptions options;
  options.max_pages = 40;
  options.synchronous_full = false;
  auto db = OpenOk(path, options);
  int committed = 0;
  absl::Status s;
  for (int i = 1; i <= 5000 && s.ok(); ++i) {
    s = AddPrediction(*db, Gemm(64 * i, 4096, 4096));
    if (s.ok()) ++committed;
  }
  ASSERT_FALSE(s.ok()) << "the cap was never reached";
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find(path), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("full"), std::string::npos) << s;
  auto stats = db->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->predictions, committed);
  auto check = db->Check();
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok);
}

// Is the same sweep already queued? That lookup is one probe of an index on
// the spec's text and state, in id order, with no sort: not every job of the
// backend and target (before schema 6), nor every run of the spec (before 7;
// a spec submitted 8,000 times made each lookup sort 8,000 jobs).
TEST(StoreJobs, FindingAJobBySpecIsOneIndexProbe) {
  TempDir dir;
  ASSERT_NE(OpenOk(dir.File("j.db")), nullptr);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("j.db").c_str(), &raw), SQLITE_OK);
  std::string plan;
  // FindJob's WHERE clause (store/src/jobs.cc).
  sqlite3_exec(
      raw,
      "EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE backend = 'model' AND target = 'H100-SXM' "
      "AND spec = '{}' AND state = 'done' AND host = 'h' ORDER BY id DESC LIMIT 1",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += std::string(values[3]) + "\n";
        return 0;
      },
      &plan, nullptr);
  sqlite3_close(raw);
  EXPECT_NE(plan.find("USING INDEX jobs_by_spec_state (backend=? AND target=? AND spec=? AND "
                      "state=?)"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
}

// A model-backend job of an empty d_ff spec on the H100.
JobRecord EmptyDffJob() {
  JobRecord job;
  job.spec = R"({"dff":[]})";
  job.backend = "model";
  job.target = "H100-SXM";
  return job;
}

TEST(StoreJobs, ASpecRunManyTimesFindsItsUnfinishedJobElseItsNewestAndCountsByState) {
  TempDir dir;
  auto db = OpenOk(dir.File("j.db"));
  const JobRecord job = EmptyDffJob();
  std::vector<int64_t> ids;
  for (int i = 0; i < 50; ++i) {
    auto created = db->CreateJob(job);
    ASSERT_TRUE(created.ok());
    ids.push_back(created->id);
    ASSERT_TRUE(db->UpdateJob(created->id, i == 7 ? JobState::kFailed : JobState::kDone, 0, 0, "")
                    .ok());
  }
  EXPECT_EQ(db->FindJob(job.spec, "model", "H100-SXM")->id, ids[7]) << "failed: resumable";
  ASSERT_TRUE(db->UpdateJob(ids[7], JobState::kDone, 0, 0, "").ok());
  EXPECT_EQ(db->FindJob(job.spec, "model", "H100-SXM")->id, ids.back()) << "all done: the newest";
  const auto counts = db->JobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"done", 50}}));
  EXPECT_EQ(db->FindJob(job.spec, "model", "A100").status().code(), absl::StatusCode::kNotFound);
}

TEST(StoreRuns, EachJobOnEachDeviceIsARunWithItsOwnBestAndItsNameAndSurvivesAMerge) {
  TempDir dir;
  const GemmShape g = Gemm(4096, 4096, 4096);
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
    ASSERT_TRUE(db->ExportTo(snapshot).ok());
    snapshots.push_back(snapshot);
  }
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) ASSERT_TRUE(catalogue->MergeFrom(snapshot).ok());
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

TEST(StoreJobs, CreateFindUpdateAndCountProgressWithResults) {
  TempDir dir;
  auto db = OpenOk(dir.File("j.db"));
  JobRecord job = EmptyDffJob();
  job.total = 2;
  auto created = db->CreateJob(job);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->uid.size(), 32u);
  ASSERT_TRUE(db->UpdateJob(created->id, JobState::kRunning, 2, 0, "").ok());
  auto p = Predict(Gemm(256, 256, 256), **FindGpu("h100"));
  ASSERT_TRUE(db->InsertPrediction(created->id, "H100-SXM", Gemm(256, 256, 256), *p).ok());
  auto found = db->FindJob(job.spec, "model", "H100-SXM");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->id, created->id);
  EXPECT_EQ(found->state, JobState::kRunning);
  EXPECT_EQ(found->done, 1);
  EXPECT_TRUE(found->started_us.has_value());
  EXPECT_FALSE(db->FindJob(job.spec, "model", "A100-SXM-80GB").ok());
  ASSERT_TRUE(db->UpdateJob(created->id, JobState::kDone, 2, 2, "").ok());
  auto done = db->GetJob(created->id);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->finished_us.has_value());
  EXPECT_EQ(db->ListJobs({.state = JobState::kDone, .limit = 10})->size(), 1u);
  EXPECT_EQ(db->UpdateJob(999, JobState::kDone, 0, 0, "").code(), absl::StatusCode::kNotFound);
}

TEST(StoreJobs, AJobKeepsItsSubmitterAndListingsPageWithoutSpecs) {
  TempDir dir;
  auto db = OpenOk(dir.File("j.db"));
  std::vector<int64_t> ids;
  for (const char* who : {"alice", "bob", "carol"}) {
    JobRecord job = EmptyDffJob();
    job.submitted_by = who;
    auto created = db->CreateJob(job);
    ASSERT_TRUE(created.ok()) << created.status();
    ids.push_back(created->id);
  }
  auto bob = db->GetJob(ids[1]);
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->submitted_by, "bob");
  EXPECT_FALSE(bob->spec.empty()) << "GetJob has the spec";
  auto page = db->ListJobs({.state = std::nullopt, .limit = 2});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].submitted_by, "carol");
  EXPECT_TRUE((*page)[0].spec.empty()) << "listings leave specs out";
  auto next = db->ListJobs({.state = std::nullopt, .limit = 2, .before_id = (*page)[1].id});
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].submitted_by, "alice");
  auto with_spec = db->ListJobs({.state = std::nullopt, .limit = 1, .with_spec = true});
  ASSERT_TRUE(with_spec.ok());
  EXPECT_FALSE((*with_spec)[0].spec.empty());
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
  EXPECT_EQ(db->Stats()->predictions, 200);
  keys.push_back(GemmKey::Of(Gemm(1, 2, 3)));  // not stored
  // Stored under the version of the model in force (a calibrated one here).
  const std::string version = ModelVersionFor(**FindGpu("h100"), DType::kBf16);
  auto found = db->FindPredictions("H100-SXM", version, keys);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 200u);
  EXPECT_GT(found->begin()->second.expected_error, 0) << "the model's error is kept";
  EXPECT_TRUE(*db->HasPrediction("H100-SXM", version, keys[0]));
  EXPECT_FALSE(*db->HasPrediction("H100-SXM", "tilewave-0", keys[0]));
  EXPECT_FALSE(*db->HasPrediction("A100-SXM-80GB", version, keys[0]));
}

TEST(StoreMeasurements, BestIsTheFastestVerifiedOnTheNewestSoftware) {
  TempDir dir;
  auto db = OpenOk(dir.File("m.db"));
  const GemmShape g = Gemm(8192, 4096, 11008);
  auto old_ids =
      db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(120900));
  auto new_ids =
      db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100));
  ASSERT_TRUE(old_ids.ok() && new_ids.ok());
  EXPECT_EQ(old_ids->first, new_ids->first) << "same device registered once";
  EXPECT_NE(old_ids->second, new_ids->second);
  // Older software was faster; the newest software is what lookups prefer.
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, old_ids->first, old_ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 800))
                  .ok());
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, new_ids->first, new_ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 1000, 4, /*unverified=*/3))
                  .ok());
  const GemmKey key = GemmKey::Of(g);
  auto best = db->BestMeasurements("H100-SXM", {&key, 1}, {}, kDefaultMode);
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  const MeasurementRow& row = best->at(key);
  EXPECT_EQ(row.software.cublaslt, 130100);
  EXPECT_DOUBLE_EQ(row.result.stats.median_us, 1000);  // the unverified 500 µs never wins
  EXPECT_TRUE(row.result.verified);
  EXPECT_EQ(row.result.algo.algo_id, 20);
  EXPECT_EQ(row.result.algo.bytes, (std::vector<uint8_t>{0, 1, 2, 3}));
  EXPECT_EQ(row.device.host, "node0");
  EXPECT_EQ(row.tiles, 32 * 32);
  EXPECT_EQ(row.waves, 8);
  SoftwarePin pin;
  pin.cublaslt = 120900;
  auto pinned = db->BestMeasurements("H100-SXM", {&key, 1}, pin, kDefaultMode);
  ASSERT_TRUE(pinned.ok());
  EXPECT_DOUBLE_EQ(pinned->at(key).result.stats.median_us, 800);
  EXPECT_TRUE(*db->HasMeasurement(new_ids->first, new_ids->second, key, kDefaultMode));
  EXPECT_FALSE(*db->HasMeasurement(new_ids->first, new_ids->second, key,
                                   {CacheMode::kWarm, ClockPolicy::kSustained}));
  EXPECT_FALSE(*db->HasMeasurement(new_ids->first, new_ids->second, key,
                                   {CacheMode::kCold, ClockPolicy::kBurst}));
  EXPECT_EQ(db->Stats()->measurements, 3 + 4);
  EXPECT_EQ(db->Stats()->verified_measurements, 3 + 3);
}

TEST(StoreFleet, ExportWhileWritingThenMergeTwiceAddsNothingTheSecondTime) {
  TempDir dir;
  const GemmShape g = Gemm(4096, 4096, 4096);
  std::vector<std::string> snapshots;
  for (const char* host : {"node1", "node2"}) {
    StoreOptions options;
    options.host = host;
    auto db = OpenOk(dir.File(std::string(host) + ".db"), options);
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                  crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    ASSERT_TRUE(
        db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                              crest::testing::FakeMeasurement(g, host[4] == '1' ? 900 : 950))
            .ok());
    ASSERT_TRUE(AddPrediction(*db, g).ok());
    // A second connection keeps writing while the export runs.
    auto writer = OpenOk(dir.File(std::string(host) + ".db"), options);
    ASSERT_TRUE(AddPrediction(*writer, Gemm(128, 128, 128)).ok());
    const std::string snapshot = dir.File(std::string(host) + ".snapshot");
    ASSERT_TRUE(db->ExportTo(snapshot).ok());
    EXPECT_EQ(db->ExportTo(snapshot).code(), absl::StatusCode::kAlreadyExists);
    snapshots.push_back(snapshot);
  }
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) {
    auto r = catalogue->MergeFrom(snapshot);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->measurements, 3);
    EXPECT_EQ(r->devices, 1);
  }
  const auto before = ReadBytes(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) {
    auto again = catalogue->MergeFrom(snapshot);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(
        again->measurements + again->predictions + again->devices + again->jobs + again->software,
        0);
  }
  auto stats = catalogue->Stats();
  EXPECT_EQ(stats->measurements, 6);
  EXPECT_EQ(stats->predictions, 2);  // identical predictions merge into one
  EXPECT_EQ(stats->devices, 2);
  EXPECT_EQ(stats->software, 1);
  const GemmKey key = GemmKey::Of(g);
  auto best = catalogue->BestMeasurements("H100-SXM", {&key, 1}, {}, kDefaultMode);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->at(key).device.host, "node1");
  EXPECT_TRUE(catalogue->Check()->ok);
}

TEST(StoreFleet, ACatalogueAnswersTheMedianOfTheNodesBestTimesOnTheNewestSoftware) {
  TempDir dir;
  const GemmShape g = Gemm(8192, 4096, 11008);
  const GemmKey key = GemmKey::Of(g);
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  // Each node's best (first algorithm) time; node4 runs older software and
  // was fastest, node2 is the luckiest chip on the newest software.
  struct Node {
    const char* host;
    double best_us;
    int64_t cublaslt;
  };
  const Node nodes[] = {{"node1", 900, 130100},
                        {"node2", 700, 130100},
                        {"node3", 1000, 130100},
                        {"node4", 100, 120900}};
  auto add_node = [&](const Node& n) {
    StoreOptions options;
    options.host = n.host;
    auto db = OpenOk(dir.File(std::string(n.host) + ".db"), options);
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + n.host, n.host),
                                  crest::testing::FakeSoftware(n.cublaslt));
    ASSERT_TRUE(ids.ok());
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                      crest::testing::FakeMeasurement(g, n.best_us))
                    .ok());
    const std::string snapshot = dir.File(std::string(n.host) + ".snapshot");
    ASSERT_TRUE(db->ExportTo(snapshot).ok());
    ASSERT_TRUE(catalogue->MergeFrom(snapshot).ok());
  };
  for (const Node& n : nodes) add_node(n);

  auto times = catalogue->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode);
  ASSERT_TRUE(times.ok());
  EXPECT_DOUBLE_EQ(times->at(key).median_us, 900) << "median of 700, 900, 1000";
  EXPECT_EQ(times->at(key).devices, 3) << "node4's older software is not mixed in";
  auto best = catalogue->BestMeasurements("H100-SXM", {&key, 1}, {}, kDefaultMode);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->at(key).device.host, "node1") << "the row shown is the median node's own";

  // An even count takes the lower middle: a real measurement, not an average.
  add_node({"node5", 800, 130100});
  times = catalogue->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode);
  ASSERT_TRUE(times.ok());
  EXPECT_DOUBLE_EQ(times->at(key).median_us, 800) << "lower middle of 700, 800, 900, 1000";
  EXPECT_EQ(times->at(key).devices, 4);

  // Pinning the older software gives its one node.
  SoftwarePin pin;
  pin.cublaslt = 120900;
  auto pinned = catalogue->BestTimes("H100-SXM", {&key, 1}, pin, kDefaultMode);
  ASSERT_TRUE(pinned.ok());
  EXPECT_DOUBLE_EQ(pinned->at(key).median_us, 100);
  EXPECT_EQ(pinned->at(key).devices, 1);
}

TEST(StoreFleet, TheAnswerFollowsAFasterRemeasurementAndIgnoresASlowerOne) {
  TempDir dir;
  auto db = OpenOk(dir.File("m.db"));
  const GemmShape g = Gemm(2048, 2048, 2048);
  const GemmKey key = GemmKey::Of(g);
  std::vector<std::pair<int64_t, int64_t>> ids;
  for (const char* host : {"node1", "node2", "node3"}) {
    auto id = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                 crest::testing::FakeSoftware());
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  auto measure = [&](size_t device, double us) {
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids[device].first, ids[device].second,
                                      "H100-SXM", 132, crest::testing::FakeMeasurement(g, us))
                    .ok());
  };
  measure(0, 500);
  measure(1, 600);
  measure(2, 700);
  const auto median = [&] {
    return db->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode)->at(key).median_us;
  };
  EXPECT_DOUBLE_EQ(median(), 600);
  measure(2, 900);  // slower than node3's best: nothing moves
  EXPECT_DOUBLE_EQ(median(), 600);
  measure(2, 400);  // node3 is now the fastest: node1's 500 is the median
  EXPECT_DOUBLE_EQ(median(), 500);
}

TEST(StoreSchema, UpgradingFromVersion2KeepsEachDevicesBest) {
  TempDir dir;
  const std::string path = dir.File("v2.db");
  const GemmShape g = Gemm(4096, 4096, 4096);
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
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
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
  ASSERT_EQ(sqlite3_exec(raw, downgrade.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  auto db = OpenOk(path);  // upgrades to the current schema
  EXPECT_EQ(db->Check()->schema_version, kSchemaVersion);
  const GemmKey key = GemmKey::Of(g);
  // Rows of versions before 4 were taken under the old burst clock rule.
  const MeasureMode burst{CacheMode::kCold, ClockPolicy::kBurst};
  auto times = db->BestTimes("H100-SXM", {&key, 1}, {}, burst);
  ASSERT_TRUE(times.ok());
  ASSERT_EQ(times->count(key), 1u);
  EXPECT_DOUBLE_EQ(times->at(key).median_us, 600);
  EXPECT_EQ(times->at(key).devices, 3);
  EXPECT_TRUE(db->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode)->empty())
      << "a burst row answered a sustained query";
  // Each device's rows (written outside any job) are one run each.
  auto runs = db->RunBests("H100-SXM", {&key, 1}, db->SoftwareVersions({})->front(), burst);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->at(key).size(), 3u);
  for (const RunBest& b : runs->at(key)) EXPECT_EQ(b.run.job_id, 0);
  int64_t newest = 0;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(
      raw, "SELECT max(id) FROM measurements",
      [](void* out, int, char** values, char**) {
        *static_cast<int64_t*>(out) = std::atoll(values[0]);
        return 0;
      },
      &newest, nullptr);
  sqlite3_close(raw);
  EXPECT_GT(newest, 0);
  EXPECT_EQ(db->Generation("H100-SXM")->measurement_id, newest) << "the upgrade fills generations";
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
  const GemmShape g = Gemm(4096, 4096, 4096);
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(g, 500))
                  .ok());
  const ResultsGeneration after_measurement = *db->Generation("H100-SXM");
  EXPECT_GT(after_measurement.measurement_id, 0);
  auto p = Predict(g, **FindGpu("a100"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(db->InsertPrediction(std::nullopt, "A100-SXM-80GB", g, *p).ok());
  EXPECT_EQ(*db->Generation("H100-SXM"), after_measurement) << "another GPU's write";
  EXPECT_GT(db->Generation("A100-SXM-80GB")->prediction_id, 0);
  // Another connection's write moves it too.
  auto other = OpenOk(dir.File("g.db"));
  ASSERT_TRUE(other->InsertPrediction(std::nullopt, "H100-SXM", g, *Predict(g, **FindGpu("h100")))
                  .ok());
  EXPECT_GT(db->Generation("H100-SXM")->prediction_id, 0);
}

TEST(StoreSchema, TheFirstGpuRunsDatabaseUpgradesAndItsRowsSayHowTheyWereMeasured) {
  TempDir dir;
  const std::string path = dir.File("seed-bmm.db");
  WriteBytes(path, ReadBytes(std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/crest-seed-bmm.db"));
  auto db = OpenOk(path);
  EXPECT_EQ(db->Check()->schema_version, kSchemaVersion);
  EXPECT_TRUE(db->Check()->ok);
  const DbStats stats = *db->Stats();
  EXPECT_EQ(stats.measurements, 120) << "rows were lost in the upgrade";
  EXPECT_EQ(stats.verified_measurements, 86);
  GemmShape bmm = Gemm(4096, 4096, 10820);
  bmm.batch = 4;
  bmm.dtype = DType::kFp16;
  bmm.b_transposed = false;  // the common script's row-major NN
  const GemmKey key = GemmKey::Of(bmm);
  auto burst = db->BestMeasurements("H100-SXM", {&key, 1}, {},
                                    {CacheMode::kCold, ClockPolicy::kBurst});
  ASSERT_TRUE(burst.ok());
  ASSERT_EQ(burst->count(key), 1u);
  const MeasurementRow& row = burst->at(key);
  EXPECT_EQ(row.mode.clocks, ClockPolicy::kBurst);
  EXPECT_GT(row.result.stats.median_us, 0);
  EXPECT_EQ(row.result.stats.ci_high_us, 0) << "an interval invented for an old row";
  EXPECT_TRUE(db->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode)->empty());
}

ImportBatch Imported(const std::string& hash, std::initializer_list<int64_t> ks) {
  ImportBatch b;
  b.gpu_model = "H100-SXM";
  b.device = "NVIDIA H100 80GB HBM3";
  b.tool = "torch.matmul, median of 20";
  b.source_file = "t.csv";
  b.source_hash = hash;
  for (int64_t k : ks) {
    b.rows.push_back({GemmKey::Of(Gemm(8192, 4096, k)), 1000.0 + static_cast<double>(k % 7)});
  }
  return b;
}

TEST(StoreImported, ImportingAFileAgainAddsNothingAndRowsKeepTheirSource) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  EXPECT_EQ(*db->InsertImported(Imported("h1", {10920, 10921, 10922})), 3);
  EXPECT_EQ(*db->InsertImported(Imported("h1", {10920, 10921, 10922})), 0) << "imported twice";
  EXPECT_EQ(*db->InsertImported(Imported("h2", {10920})), 1) << "another file is another run";
  auto rows = db->ImportedTimings("H100-SXM");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].tool, "torch.matmul, median of 20");
  EXPECT_EQ((*rows)[0].device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*rows)[0].timing.key.k, 10920);
  EXPECT_TRUE(db->ImportedTimings("A100-SXM-80GB")->empty());
  EXPECT_EQ(db->Stats()->imported, 4);
  EXPECT_EQ(db->Stats()->imported_by_gpu.at("H100-SXM"), 4);
}

TEST(StoreImported, ImportedTimingsNeverAnswerALookup) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  ASSERT_TRUE(db->InsertImported(Imported("h1", {10920})).ok());
  const GemmKey key = GemmKey::Of(Gemm(8192, 4096, 10920));
  EXPECT_TRUE(db->BestTimes("H100-SXM", {&key, 1}, {}, kDefaultMode)->empty());
  EXPECT_TRUE(db->AllBestTimes("H100-SXM", {}, kDefaultMode)->empty());
  EXPECT_EQ(db->Stats()->measurements, 0);
}

TEST(StoreImported, MergesCarryImportedTimingsOnce) {
  TempDir dir;
  auto node = OpenOk(dir.File("node.db"));
  ASSERT_TRUE(node->InsertImported(Imported("h1", {10920, 10921})).ok());
  ASSERT_TRUE(node->ExportTo(dir.File("snap.db")).ok());
  auto catalogue = OpenOk(dir.File("cat.db"));
  EXPECT_EQ(catalogue->MergeFrom(dir.File("snap.db"))->imported, 2);
  EXPECT_EQ(catalogue->MergeFrom(dir.File("snap.db"))->imported, 0);
  EXPECT_EQ(catalogue->ImportedTimings("H100-SXM")->size(), 2u);
}

TEST(StoreLookup, AllBestTimesGivesEveryKeysAnswerOnItsNewestSoftware) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  auto old_ids = db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(120900));
  auto new_ids = db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100));
  ASSERT_TRUE(old_ids.ok() && new_ids.ok());
  for (int64_t k : {4096, 8192}) {
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, old_ids->first, old_ids->second, "H100-SXM",
                                      132, crest::testing::FakeMeasurement(Gemm(64, 64, k), 50))
                    .ok());
  }
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, new_ids->first, new_ids->second, "H100-SXM",
                                    132, crest::testing::FakeMeasurement(Gemm(64, 64, 4096), 70))
                  .ok());
  auto all = db->AllBestTimes("H100-SXM", {}, kDefaultMode);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  for (const auto& [key, t] : *all) {
    EXPECT_DOUBLE_EQ(t.median_us, key.k == 4096 ? 70 : 50) << "newest software per key";
    EXPECT_GT(t.ci_high_us, t.ci_low_us);
  }
  EXPECT_TRUE(db->AllBestTimes("H100-SXM", {}, {CacheMode::kWarm, ClockPolicy::kSustained})
                  ->empty());
}

TEST(StoreFleet, MergeRefusesASnapshotOfANewerSchemaByItsOwnVersion) {
  TempDir dir;
  auto db = OpenOk(dir.File("catalogue.db"));
  auto node = OpenOk(dir.File("node.db"));
  ASSERT_TRUE(node->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware()).ok());
  ASSERT_TRUE(node->ExportTo(dir.File("future.db")).ok());
  SetUserVersion(dir.File("future.db"), 99);
  auto merged = db->MergeFrom(dir.File("future.db"));
  ASSERT_FALSE(merged.ok()) << "the catalogue's own version was read, not the snapshot's";
  EXPECT_NE(merged.status().message().find("future.db: newer schema version 99"),
            std::string::npos)
      << merged.status();
  EXPECT_EQ(db->Stats()->devices, 0) << "nothing was merged";
}

TEST(StoreFleet, MergeRefusesWhatIsNotASnapshot) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  EXPECT_EQ(db->MergeFrom(dir.File("missing.db")).status().code(), absl::StatusCode::kNotFound);
  WriteBytes(dir.File("junk.db"), std::string(5000, 'j'));
  auto r = db->MergeFrom(dir.File("junk.db"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("junk.db"), std::string::npos) << r.status();
}

TEST(StoreFleet, MergeErrorsNameTheSnapshotAtFaultAndLeaveTheTargetByteIdentical) {
  TempDir dir;
  {
    auto node = OpenOk(dir.File("node.db"));
    ASSERT_TRUE(AddPrediction(*node, Gemm(4096, 4096, 4096)).ok());
    ASSERT_TRUE(node->ExportTo(dir.File("good.db")).ok());
    ASSERT_TRUE(node->ExportTo(dir.File("future.db")).ok());
  }
  SetUserVersion(dir.File("future.db"), 99);
  std::string bad = ReadBytes(dir.File("good.db"));
  ASSERT_GT(bad.size(), 4u * 4096);
  for (size_t i = 2 * 4096; i < bad.size(); ++i) bad[i] = static_cast<char>(0xff);
  WriteBytes(dir.File("corrupt.db"), bad);
  WriteBytes(dir.File("text.db"), "id,time\n1,2\n");
  auto db = OpenOk(dir.File("cat.db"));
  ASSERT_TRUE(AddPrediction(*db, Gemm(1024, 1024, 1024)).ok());
  db.reset();
  const std::string before = ReadBytes(dir.File("cat.db"));
  for (const char* name : {"text.db", "corrupt.db", "future.db"}) {
    auto target = OpenOk(dir.File("cat.db"));
    auto r = target->MergeFrom(dir.File(name));
    ASSERT_FALSE(r.ok()) << name;
    const std::string message(r.status().message());
    EXPECT_EQ(message.find(dir.File(name)), 0u) << "the snapshot leads the message: " << message;
    EXPECT_EQ(message.find(dir.File("cat.db") + ":"), std::string::npos)
        << "the target is not blamed: " << message;
    target.reset();
    EXPECT_EQ(ReadBytes(dir.File("cat.db")), before) << name << " left the target as it was";
    auto check = OpenOk(dir.File("cat.db"))->Check();
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(check->ok);
  }
}

// The replay backend's simulated H100, as its runs are stored.
DeviceInfo ReplayedH100() {
  DeviceInfo d = crest::testing::FakeH100("REPLAY-0123456789abcdef");
  d.replay = "torch-mlp-h4096.csv (00ff), noise 0.02, seed 1, drift none";
  return d;
}

TEST(StoreFleet, ReplayedAndMeasuredRunsOfOneGpuModelAreKeptApartWhenRegisteredAndMerged) {
  TempDir dir;
  auto replayed = OpenOk(dir.File("replayed.db"));
  ASSERT_TRUE(replayed->RegisterDevice(ReplayedH100(), crest::testing::FakeSoftware(0)).ok());
  ASSERT_TRUE(replayed->RegisterDevice(ReplayedH100(), crest::testing::FakeSoftware(0)).ok())
      << "the same replay device again is not a mix";
  auto measured = replayed->RegisterDevice(crest::testing::FakeH100(),
                                           crest::testing::FakeSoftware(130100));
  ASSERT_FALSE(measured.ok());
  EXPECT_EQ(measured.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(measured.status().message().find("holds replayed runs of H100-SXM"), std::string::npos)
      << measured.status();
  ASSERT_TRUE(replayed->ExportTo(dir.File("replayed-snapshot.db")).ok());

  auto real = OpenOk(dir.File("real.db"));
  ASSERT_TRUE(real->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100)).ok());
  auto merged = real->MergeFrom(dir.File("replayed-snapshot.db"));
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("replayed-snapshot.db"), std::string::npos)
      << merged.status();

  // Into a database of its own kind the merge carries the replay column.
  auto other = OpenOk(dir.File("other.db"));
  ASSERT_TRUE(other->MergeFrom(dir.File("replayed-snapshot.db")).ok());
  auto again = other->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(1));
  EXPECT_FALSE(again.ok()) << "the merged device is still a replay device";
}

TEST(StoreConcurrency, ReadersKeepAnsweringWhileASweepWrites) {
  TempDir dir;
  const std::string path = dir.File("busy.db");
  OpenOk(path).reset();
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    StoreOptions options;
    options.synchronous_full = false;
    auto db = OpenOk(path, options);
    for (int64_t k = 1; !stop.load() && k < 200000; ++k) {
      ASSERT_TRUE(AddPrediction(*db, Gemm(8192, 4096, k)).ok());
      writes.fetch_add(1);
    }
  });
  std::vector<std::thread> readers;
  std::atomic<int> answers{0};
  std::atomic<int> failures{0};
  std::mutex first_failure_mutex;
  std::string first_failure;
  const auto fail = [&](const absl::Status& s) {
    failures.fetch_add(1);
    std::lock_guard<std::mutex> lock(first_failure_mutex);
    if (first_failure.empty()) first_failure = std::string(s.message());
  };
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      // The settings every crest reader uses (busy timeout included): what
      // must hold is that no SQLITE_BUSY reaches a user.
      StoreOptions ro;
      ro.read_only = true;
      auto db = Store::Open(path, ro);
      if (!db.ok()) {
        fail(db.status());
        return;
      }
      std::vector<GemmKey> keys;
      for (int64_t k = 1; k < 300; ++k) keys.push_back(GemmKey::Of(Gemm(8192, 4096, k)));
      while (!stop.load()) {
        auto found = (*db)->FindPredictions("H100-SXM", kPredictorVersion, keys);
        auto best = (*db)->BestMeasurements("H100-SXM", keys, {}, kDefaultMode);
        if (found.ok() && best.ok()) {
          answers.fetch_add(1);
        } else {
          fail(found.ok() ? best.status() : found.status());
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0) << "first: " << first_failure;
  EXPECT_GT(answers.load(), 10);
  EXPECT_GT(writes.load(), 10);
}

}  // namespace
}  // namespace crest::store
