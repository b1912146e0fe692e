// The job table (jobs.cc): creating, finding by spec, progress, listings.
#include <sqlite3.h>

#include <map>

#include "crest/store/store.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::EmptyDffJob;
using crest::store_tests::Gemm;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

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

TEST(StoreJobs, ASpecRunManyTimesFindsItsUnfinishedJobElseItsNewestAndCountsByState) {
  TempDir dir;
  auto db = OpenOk(dir.File("j.db"));
  const JobRecord job = EmptyDffJob();
  std::vector<int64_t> ids;
  for (int i = 0; i < 50; ++i) {
    auto created = db->CreateJob(job);
    ASSERT_TRUE(created.ok());
    ids.push_back(created->id);
    ASSERT_TRUE(
        db->UpdateJob(created->id, i == 7 ? JobState::kFailed : JobState::kDone, 0, 0, "").ok());
  }
  EXPECT_EQ(db->FindJob(job.spec, "model", "H100-SXM")->id, ids[7]) << "failed: resumable";
  ASSERT_TRUE(db->UpdateJob(ids[7], JobState::kDone, 0, 0, "").ok());
  EXPECT_EQ(db->FindJob(job.spec, "model", "H100-SXM")->id, ids.back()) << "all done: the newest";
  const auto counts = db->JobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"done", 50}}));
  EXPECT_EQ(db->FindJob(job.spec, "model", "A100").status().code(), absl::StatusCode::kNotFound);
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
  auto p = tuner::Predict(Gemm(256, 256, 256), **tuner::FindGpu("h100"));
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

}  // namespace
}  // namespace crest::store
