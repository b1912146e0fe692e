// crestd's job queue (job_queue.cc) over a fake job store: its own
// bookkeeping — what it requeues at start, what a submission returns, whose
// jobs a client may cancel — with no database and no lane running a job.
#include "job_queue.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crest/common/str_cat.h"
#include "gtest/gtest.h"
#include "store_pool.h"
#include "temp_dir.h"

namespace crest::service {
namespace {

using store::JobRecord;
using store::JobState;

// Jobs in memory, as a Store keeps them (newest first, this host's only for
// FindJob). Shared with the test, which reads what the queue wrote.
struct FakeJobs {
  std::map<int64_t, JobRecord> jobs;
  int64_t next_id = 1;
  int updates = 0;
};

class FakeJobStore final : public store::JobStore {
 public:
  FakeJobStore(std::shared_ptr<FakeJobs> jobs, std::string host)
      : jobs_(std::move(jobs)), host_(std::move(host)) {}

  absl::StatusOr<JobRecord> FindJob(const std::string& spec, const std::string& backend,
                                    const std::string& target) override {
    const JobRecord* unfinished = nullptr;  // queued, running or failed
    const JobRecord* finished = nullptr;
    for (const auto& [id, j] : jobs_->jobs) {  // oldest first: the last match is the newest
      if (j.host != host_ || j.spec != spec || j.backend != backend || j.target != target) {
        continue;
      }
      const bool ended = j.state == JobState::kDone || j.state == JobState::kCancelled;
      (ended ? finished : unfinished) = &j;
    }
    if (unfinished != nullptr) return *unfinished;
    if (finished != nullptr) return *finished;
    return absl::NotFoundError("no such job");
  }
  absl::StatusOr<JobRecord> CreateJob(const JobRecord& job) override {
    JobRecord j = job;
    j.id = jobs_->next_id++;
    j.uid = StrCat("uid-", j.id);
    j.host = host_;
    jobs_->jobs[j.id] = j;
    return j;
  }
  absl::StatusOr<JobRecord> GetJob(int64_t id) override {
    auto it = jobs_->jobs.find(id);
    if (it == jobs_->jobs.end()) return absl::NotFoundError(StrCat("job ", id, " not found"));
    return it->second;
  }
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobListing& listing) override {
    std::vector<JobRecord> out;
    for (auto it = jobs_->jobs.rbegin(); it != jobs_->jobs.rend(); ++it) {
      if (listing.state && it->second.state != *listing.state) continue;
      out.push_back(it->second);
    }
    return out;
  }
  absl::Status UpdateJob(int64_t id, JobState state, int64_t total, int64_t done,
                         const std::string& error) override {
    auto it = jobs_->jobs.find(id);
    if (it == jobs_->jobs.end()) return absl::NotFoundError(StrCat("job ", id, " not found"));
    it->second.state = state;
    it->second.total = total;
    it->second.done = done;
    it->second.error = error;
    ++jobs_->updates;
    return absl::OkStatus();
  }
  absl::StatusOr<std::map<std::string, int64_t>> JobsByState() override {
    std::map<std::string, int64_t> out;
    for (const auto& [id, j] : jobs_->jobs) ++out[std::string(store::JobStateName(j.state))];
    return out;
  }

 private:
  std::shared_ptr<FakeJobs> jobs_;
  std::string host_;
};

const std::string kSpec =
    R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 2}]})";

class JobQueueTest : public ::testing::Test {
 protected:
  JobQueueOptions Options() {
    JobQueueOptions o;
    o.db_path = dir_.File("unused.db");  // the fake stands in; no lane runs
    o.lanes = {Lane{"model", "model", "", "", -1}};
    o.host = "node0";
    o.max_queued_per_client = 2;
    o.run_lanes = false;
    o.open_job_store = [jobs = jobs_]() -> absl::StatusOr<std::unique_ptr<store::JobStore>> {
      return std::make_unique<FakeJobStore>(jobs, "node0");
    };
    o.on_job_end = [this](const JobRecord& j) { ended_.push_back(j.id); };
    return o;
  }
  JobRecord Stored(JobState state, const std::string& host, const std::string& backend,
                   const std::string& target) {
    JobRecord j;
    j.id = jobs_->next_id++;
    j.host = host;
    j.spec = kSpec;
    j.backend = backend;
    j.target = target;
    j.state = state;
    j.total = 10;
    j.done = 3;
    jobs_->jobs[j.id] = j;
    return j;
  }

  crest::testing::TempDir dir_;
  std::shared_ptr<FakeJobs> jobs_ = std::make_shared<FakeJobs>();
  StorePool pool_{dir_.File("unused.db")};
  std::vector<int64_t> ended_;
};

TEST_F(JobQueueTest, StartRequeuesThisHostsUnfinishedJobsAndFailsThoseItHasNoLaneFor) {
  const JobRecord running = Stored(JobState::kRunning, "node0", "model", "H100-SXM");
  const JobRecord queued = Stored(JobState::kQueued, "node0", "model", "H100-SXM");
  const JobRecord elsewhere = Stored(JobState::kQueued, "node9", "model", "H100-SXM");
  const JobRecord no_lane = Stored(JobState::kQueued, "node0", "cublaslt", "GPU-abc");
  JobQueue queue(Options(), pool_);
  ASSERT_TRUE(queue.Start().ok());
  EXPECT_EQ(queue.QueuedCount(), 2) << "the running and the queued job of this host";
  EXPECT_EQ(jobs_->jobs.at(running.id).state, JobState::kRunning) << "requeued, left as it was";
  EXPECT_EQ(jobs_->jobs.at(queued.id).state, JobState::kQueued);
  EXPECT_EQ(jobs_->jobs.at(elsewhere.id).state, JobState::kQueued) << "another host's job";
  const JobRecord& failed = jobs_->jobs.at(no_lane.id);
  EXPECT_EQ(failed.state, JobState::kFailed);
  EXPECT_NE(failed.error.find("no cublaslt lane for target GPU-abc"), std::string::npos)
      << failed.error;
  EXPECT_EQ(failed.done, 3) << "its progress is kept";
}

TEST_F(JobQueueTest, TheSameSweepOnItsWayIsReturnedUnlessForcedAndEachClientHasItsLimit) {
  JobQueue queue(Options(), pool_);
  ASSERT_TRUE(queue.Start().ok());
  auto first = queue.Submit({kSpec, "model", 0, false, "alice"});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->job.submitted_by, "alice");
  EXPECT_EQ(first->job.target, "H100-SXM");
  auto again = queue.Submit({kSpec, "model", 0, false, "bob"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id, first->job.id) << "one job for one sweep";
  auto forced = queue.Submit({kSpec, "model", 0, true, "alice"});
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_TRUE(forced->created);
  EXPECT_NE(forced->job.id, first->job.id);
  // Alice has two queued, her limit; a third sweep of hers is refused.
  const std::string other =
      R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 8192, "window": 2}]})";
  auto third = queue.Submit({other, "model", 0, false, "alice"});
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("--max-queued-per-client 2"), std::string::npos)
      << third.status();
  EXPECT_TRUE(queue.Submit({other, "model", 0, false, "bob"}).ok()) << "bob has his own room";
  EXPECT_EQ(queue.QueuedCount(), 3);
}

TEST_F(JobQueueTest, AClientCancelsOnlyItsOwnQueuedJobAndAnEndedOneStaysEnded) {
  JobQueue queue(Options(), pool_);
  ASSERT_TRUE(queue.Start().ok());
  auto submitted = queue.Submit({kSpec, "model", 0, false, "alice"});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const int64_t id = submitted->job.id;
  auto by_bob = queue.Cancel(id, {"bob", false});
  EXPECT_EQ(by_bob.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(by_bob.status().message().find("submitted by 'alice'"), std::string::npos);
  EXPECT_EQ(jobs_->jobs.at(id).state, JobState::kQueued) << "bob's try changed it";
  auto by_alice = queue.Cancel(id, {"alice", false});
  ASSERT_TRUE(by_alice.ok()) << by_alice.status();
  EXPECT_EQ(by_alice->state, JobState::kCancelled);
  EXPECT_EQ(jobs_->jobs.at(id).error, "cancelled before it started");
  EXPECT_EQ(queue.QueuedCount(), 0) << "it left the lane's queue";
  EXPECT_EQ(ended_, (std::vector<int64_t>{id})) << "told as an end";
  auto twice = queue.Cancel(id, {"", true});
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(twice.status().message().find("already ended (cancelled)"), std::string::npos);
  // An operator may cancel anyone's.
  auto other = queue.Submit({kSpec, "model", 0, true, "carol"});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(queue.Cancel(other->job.id, {"ops", true}).ok());
}

TEST_F(JobQueueTest, NothingIsQueuedOrCancelledOnceStopping) {
  JobQueue queue(Options(), pool_);
  ASSERT_TRUE(queue.Start().ok());
  auto submitted = queue.Submit({kSpec, "model", 0, false, "alice"});
  ASSERT_TRUE(submitted.ok());
  queue.Stop();
  EXPECT_EQ(queue.Submit({kSpec, "model", 0, true, "alice"}).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(queue.Cancel(submitted->job.id, {"alice", false}).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(jobs_->jobs.at(submitted->job.id).state, JobState::kQueued)
      << "kept for the next start";
}

}  // namespace
}  // namespace crest::service
