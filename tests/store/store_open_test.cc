// Opening a store (a new file, an older schema, a foreign or corrupt file, read-only
// places), writing to it when space runs out, and reading while a sweep writes.
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "crest/store/admin.h"
#include "crest/store/schema_version.h"
#include "crest/store/store.h"
#include "fake_env.h"
#include "gtest/gtest.h"
#include "readonly_vfs.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::AddPrediction;
using crest::store_tests::Gemm;
using crest::store_tests::kDefaultMode;
using crest::store_tests::OpenOk;
using crest::store_tests::SetUserVersion;
using crest::testing::ReadBytes;
using crest::testing::TempDir;
using crest::testing::WriteBytes;

TEST(StoreOpen, CreatesTheCurrentSchemaInWalMode) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  ASSERT_NE(db, nullptr);
  auto check = store::Check(*db);
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
  auto stats = store::Stats(*db);
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
    auto check = store::Check(**db);
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
  auto stats = store::Stats(**db);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->predictions, 1);
  auto check = store::Check(**db);
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
  auto stats = store::Stats(*db);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->predictions, committed);
  auto check = store::Check(*db);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->ok);
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
        auto found = (*db)->FindPredictions("H100-SXM", tuner::kPredictorVersion, keys);
        store::RunFilter filter;
        filter.gpu_model = "H100-SXM";
        auto best = (*db)->NewestRunBests(filter);
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
