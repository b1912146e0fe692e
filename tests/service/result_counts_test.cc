// GetNodeInfo's database counts: counted once per results generation and at
// most every kMinRecountSeconds (a full count scans the database), jobs by
// state always current.
#include "result_counts.h"

#include <sqlite3.h>

#include "crest/store/store.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest::service {
namespace {

tuner::GemmShape Gemm(int64_t k) {
  tuner::GemmShape g;
  g.m = 8192;
  g.n = 4096;
  g.k = k;
  return g;
}

void AddPrediction(store::Store& db, int64_t k) {
  auto p = tuner::Predict(Gemm(k), **tuner::FindGpu("h100"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(db.InsertPrediction(std::nullopt, "H100-SXM", Gemm(k), *p).ok());
}

// Removes a row behind the store's back: no trigger moves the generation.
void DeleteOnePrediction(const std::string& path) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(raw, "DELETE FROM predictions WHERE id = (SELECT min(id) FROM predictions)",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(raw);
}

absl::StatusOr<std::unique_ptr<store::Store>> OpenDb(const std::string& path) {
  store::StoreOptions options;
  options.host = "node0";
  return store::Store::Open(path, options);
}

TEST(ResultCounts, CountsOncePerGenerationAndKeepsJobsCurrent) {
  testing::TempDir dir;
  const std::string path = dir.File("c.db");
  auto db = OpenDb(path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int64_t k = 1000; k < 1010; ++k) AddPrediction(**db, k);

  ResultCounts counts;
  double now = 100;
  EXPECT_EQ(counts.Get(**db, now)->predictions, 10);
  now += 60;
  EXPECT_EQ(counts.Get(**db, now)->predictions, 10);
  EXPECT_EQ(counts.counts_taken(), 1) << "no write, no second scan, however late";

  DeleteOnePrediction(path);  // by another process: the generation moves (schema 9)
  EXPECT_EQ(counts.Get(**db, now)->predictions, 9) << "a delete is a change: counted again";
  EXPECT_EQ(counts.counts_taken(), 2);

  store::JobRecord job;
  job.spec = "{}";
  job.backend = "model";
  job.target = "H100-SXM";
  ASSERT_TRUE((*db)->CreateJob(job).ok());
  const auto with_job = counts.Get(**db, now);
  ASSERT_TRUE(with_job.ok());
  EXPECT_EQ(with_job->jobs_by_state.at("queued"), 1) << "jobs are counted on every call";
  EXPECT_EQ(counts.counts_taken(), 2);

  now += ResultCounts::kMinRecountSeconds;
  AddPrediction(**db, 2000);
  EXPECT_EQ(counts.Get(**db, now)->predictions, 10) << "9 left + 1 new, counted again";
  EXPECT_EQ(counts.counts_taken(), 3);

  // A sweep writing several results a second: counted again at most every
  // kMinRecountSeconds.
  AddPrediction(**db, 2001);
  EXPECT_EQ(counts.Get(**db, now + 0.5)->predictions, 10) << "too soon: kept";
  EXPECT_EQ(counts.Get(**db, now + ResultCounts::kMinRecountSeconds)->predictions, 11);
  EXPECT_EQ(counts.counts_taken(), 4);
}

// A clock step back (crestd takes a monotonic clock; a wall clock stepped by
// NTP once froze the counts until it caught up) does not freeze the counts.
TEST(ResultCounts, AClockThatGoesBackStillCountsTheNextChange) {
  testing::TempDir dir;
  const std::string path = dir.File("c.db");
  auto db = OpenDb(path);
  ASSERT_TRUE(db.ok()) << db.status();
  AddPrediction(**db, 1000);
  ResultCounts counts;
  EXPECT_EQ(counts.Get(**db, 1'000'000)->predictions, 1);
  AddPrediction(**db, 1001);
  EXPECT_EQ(counts.Get(**db, 10)->predictions, 2) << "the clock went back an hour: counted";
  EXPECT_EQ(counts.counts_taken(), 2);
}

}  // namespace
}  // namespace crest::service
