// The WAL-index mark (store/src/wal_index.h) and the Generation memo built on
// it: a reader that skips its query while the mark is unchanged must still
// see every commit, by any connection, at once.
#include "wal_index.h"

#include <sqlite3.h>

#include "crest/store/store.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "gtest/gtest.h"
#include "sqlite.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store::internal {
namespace {

using crest::store_tests::Gemm;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

void AddPrediction(Store& db, int64_t k) {
  const tuner::GemmShape g = Gemm(4096, 4096, k);
  auto p = tuner::Predict(g, **tuner::FindGpu("h100"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(db.InsertPrediction(std::nullopt, "H100-SXM", g, *p).ok());
}

void RawExec(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

TEST(WalIndexMark, ChangesWithEveryCommitOfAnyConnectionAndOnlyThen) {
  TempDir dir;
  const std::string path = dir.File("w.db");
  auto writer = OpenOk(path);
  auto mark = WalIndexMark::Open(path);
  ASSERT_TRUE(mark.has_value()) << "a Crest database is in WAL mode: its -shm exists";
  const auto before = mark->Read();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(mark->Read(), before) << "nothing committed";
  (void)writer->Generation("H100-SXM");  // a read commits nothing
  EXPECT_EQ(mark->Read(), before);
  AddPrediction(*writer, 4096);
  const auto after_write = mark->Read();
  EXPECT_NE(after_write, before);
  // A checkpoint that empties the WAL, then a commit: the WAL restarts at
  // frame 1 with new salts, and the mark still moves.
  RawExec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
  AddPrediction(*writer, 4104);
  const auto after_restart = mark->Read();
  EXPECT_NE(after_restart, after_write);
  EXPECT_NE(after_restart, before);
}

TEST(WalIndexMark, NoneForADatabaseNotInWalMode) {
  TempDir dir;
  const std::string path = dir.File("plain.db");
  RawExec(path, "CREATE TABLE t(x)");
  EXPECT_FALSE(WalIndexMark::Open(path).has_value());
}

// crestd's request connections: read-only, no memory map, asked for the
// generation before every answer.
TEST(StoreGeneration, AReaderThatSkipsItsQuerySeesEveryCommitAtOnce) {
  TempDir dir;
  const std::string path = dir.File("g.db");
  auto writer = OpenOk(path);
  StoreOptions options;
  options.read_only = true;
  options.memory_map = false;
  auto reader = OpenOk(path, options);
  auto other_gpu_writer = OpenOk(path);
  int64_t last = reader->Generation("H100-SXM")->prediction_id;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(reader->Generation("H100-SXM")->prediction_id, last) << "nothing new at " << i;
    AddPrediction(*writer, 4096 + 8 * i);
    if (i == 10) RawExec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    const int64_t now = reader->Generation("H100-SXM")->prediction_id;
    EXPECT_GT(now, last) << "commit " << i << " not seen";
    EXPECT_EQ(now, writer->Generation("H100-SXM")->prediction_id);
    last = now;
    // Another GPU's write moves the mark, not this GPU's generation.
    const tuner::GemmShape g = Gemm(4096, 4096, 8192);
    ASSERT_TRUE(other_gpu_writer
                    ->InsertPrediction(std::nullopt, "A100-SXM-80GB", g,
                                       *Predict(g, **tuner::FindGpu("a100")))
                    .ok());
    EXPECT_EQ(reader->Generation("H100-SXM")->prediction_id, last);
  }
}

// A database another tool switched out of WAL mode has no WAL index to
// watch, even where an old "-shm" file was left behind: the reader asks
// SQLite every time, and still sees each commit.
TEST(StoreGeneration, ADatabaseInRollbackModeIsReadEveryTime) {
  TempDir dir;
  const std::string path = dir.File("r.db");
  auto wal_era = OpenOk(path);
  const std::string stale_index = crest::testing::ReadBytes(path + "-shm");
  wal_era.reset();
  RawExec(path, "PRAGMA journal_mode=DELETE");
  crest::testing::WriteBytes(path + "-shm", stale_index);
  StoreOptions options;
  options.read_only = true;
  auto reader = OpenOk(path, options);
  for (int i = 1; i <= 3; ++i) {
    RawExec(path, ("INSERT INTO generations (gpu_model, measurement_id, prediction_id) "
                   "VALUES ('H100-SXM', 0, " +
                   std::to_string(i) +
                   ") "
                   "ON CONFLICT (gpu_model) DO UPDATE SET prediction_id = excluded.prediction_id")
                      .c_str());
    EXPECT_EQ(reader->Generation("H100-SXM")->prediction_id, i);
  }
}

TEST(StoreOptions, MemoryMapFalseReadsWithoutAMap) {
  TempDir dir;
  const std::string path = dir.File("m.db");
  OpenOk(path).reset();
  for (bool map : {true, false}) {
    Connection::Options options;
    options.read_only = true;
    options.memory_map = map;
    auto conn = Connection::Open(path, options);
    ASSERT_TRUE(conn.ok()) << conn.status();
    ASSERT_TRUE((*conn)->Configure(options).ok());
    auto stmt = (*conn)->Prepare("PRAGMA mmap_size");
    ASSERT_TRUE(stmt.ok());
    int64_t bytes = -1;
    ASSERT_TRUE((*stmt)
                    ->ForEachRow("reading mmap_size",
                                 [&](const Statement& row) { bytes = row.Int("mmap_size"); })
                    .ok());
    if (map) {
      EXPECT_GT(bytes, 0);
    } else {
      EXPECT_EQ(bytes, 0);
    }
  }
}

}  // namespace
}  // namespace crest::store::internal
