// crestd killed at random points, again and again, while it runs several
// jobs with streams open: after every SIGKILL the database passes its check,
// and once it is left to run, every job ends done and the results are
// exactly those of an uninterrupted run (same keys, none twice, none lost).
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"
#include "db_files.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest {
namespace {

// Three jobs of 1,026 + 1,026 + 514 GEMMs (model backend).
const std::vector<std::string> kSpecs = {
    R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 256}]})",
    R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 5120, "window": 256}]})",
    R"({"version": 1, "gpu": "a100", "dff": [{"hidden": 8192, "window": 128}]})",
};

std::unique_ptr<v1::Crest::Stub> StubOf(const testing::CrestdProcess& p) { return p.Stub(); }

void SubmitAll(const testing::CrestdProcess& daemon) {
  auto stub = StubOf(daemon);
  for (const auto& spec : kSpecs) {
    grpc::ClientContext context;
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(spec);
    v1::SubmitJobResponse response;
    const grpc::Status s = stub->SubmitJob(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
}

// Every job of the daemon's queue, once all have ended; empty on timeout.
std::vector<v1::Job> WaitForAll(const testing::CrestdProcess& daemon, int seconds) {
  auto stub = StubOf(daemon);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    grpc::ClientContext context;
    v1::ListJobsResponse list;
    if (stub->ListJobs(&context, v1::ListJobsRequest(), &list).ok()) {
      bool ended = list.jobs_size() > 0;
      for (const auto& j : list.jobs()) {
        ended = ended && (j.state() == v1::JOB_STATE_DONE || j.state() == v1::JOB_STATE_FAILED ||
                          j.state() == v1::JOB_STATE_CANCELLED);
      }
      if (ended) return {list.jobs().begin(), list.jobs().end()};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

// The predictions' keys, one string each, and how many rows there are.
std::pair<std::multiset<std::string>, int64_t> Keys(const std::string& db) {
  std::multiset<std::string> keys;
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_exec(
      raw,
      "SELECT gpu_model || ' ' || model_version || ' ' || dtype || ' ' || trans_a || trans_b || "
      "' ' || batch || ' ' || m || ' ' || n || ' ' || k FROM predictions",
      [](void* out, int, char** values, char**) {
        static_cast<std::multiset<std::string>*>(out)->insert(values[0]);
        return 0;
      },
      &keys, nullptr);
  sqlite3_close(raw);
  return {keys, static_cast<int64_t>(keys.size())};
}

// Streams held open while the daemon dies: they must end, not hang.
std::vector<std::thread> Watchers(const testing::CrestdProcess& daemon) {
  std::vector<std::thread> out;
  for (int id = 1; id <= 3; ++id) {
    out.emplace_back([channel = daemon.Channel(), id] {
      auto stub = v1::Crest::NewStub(channel);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      v1::WatchJobRequest request;
      request.set_id(id);
      auto reader = stub->WatchJob(&context, request);
      v1::JobEvent event;
      while (reader->Read(&event)) {
      }
      (void)reader->Finish();
    });
  }
  return out;
}

int Kills() {
  const char* n = std::getenv("CREST_CRASH_STORM_KILLS");
  return n != nullptr ? std::atoi(n) : 50;
}

TEST(CrashStorm, FiftySigkillsAcrossDaemonSweepsLoseNothingAndDuplicateNothing) {
  testing::TempDir dir;
  const std::string state = dir.File("storm");
  const std::string db = state + "/crest.db";
  std::filesystem::create_directories(state);
  std::mt19937_64 rng(20261123);
  const std::vector<std::string> slow = {"--model-gemm-delay-ms", "4", "--log-level", "warn"};
  int64_t rows_before = 0;
  std::vector<int64_t> rows_at_kill;
  for (int kill = 0; kill < Kills(); ++kill) {
    testing::CrestdProcess daemon;
    std::string why;
    ASSERT_TRUE(daemon.Start(CRESTD_TESTING_BIN, state, slow, &why))
        << "start " << kill << ": " << why;
    if (kill == 0) SubmitAll(daemon);
    auto watchers = Watchers(daemon);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 250)(rng)));
    daemon.Stop(SIGKILL);
    for (auto& t : watchers) t.join();

    auto whole = testing::DatabaseIsWhole(db);
    ASSERT_TRUE(whole.ok()) << "after kill " << kill << ": " << whole.status();
    ASSERT_TRUE(*whole) << "after kill " << kill;
    const int64_t rows = Keys(db).second;
    EXPECT_GE(rows, rows_before) << "rows were lost by kill " << kill;
    rows_before = rows;
    rows_at_kill.push_back(rows);
  }
  // Left to run, every job finishes.
  testing::CrestdProcess last;
  std::string why;
  ASSERT_TRUE(last.Start(CRESTD_TESTING_BIN, state, {"--log-level", "warn"}, &why)) << why;
  const auto jobs = WaitForAll(last, 120);
  ASSERT_EQ(jobs.size(), kSpecs.size()) << "a job was lost or created twice";
  for (const auto& j : jobs) {
    EXPECT_EQ(j.state(), v1::JOB_STATE_DONE) << j.id() << ": " << j.error();
    EXPECT_EQ(j.done(), j.total());
  }
  last.Stop(SIGTERM);

  // The same jobs, never interrupted.
  const std::string calm = dir.File("calm");
  std::filesystem::create_directories(calm);
  testing::CrestdProcess reference;
  ASSERT_TRUE(reference.Start(CRESTD_TESTING_BIN, calm, {"--log-level", "warn"}, &why)) << why;
  SubmitAll(reference);
  ASSERT_EQ(WaitForAll(reference, 120).size(), kSpecs.size());
  reference.Stop(SIGTERM);

  const auto [stormed, stormed_rows] = Keys(db);
  const auto [expected, expected_rows] = Keys(calm + "/crest.db");
  EXPECT_EQ(stormed_rows, expected_rows);
  EXPECT_TRUE(stormed == expected) << "the killed daemon's results differ from a calm run's";
  EXPECT_EQ(std::set<std::string>(stormed.begin(), stormed.end()).size(), stormed.size())
      << "a result was written twice";
  const auto mid_job = std::count_if(rows_at_kill.begin(), rows_at_kill.end(),
                                     [&](int64_t r) { return r < stormed_rows; });
  EXPECT_GE(mid_job * 2, Kills()) << "most kills must land while the jobs still run";
  std::cout << Kills() << " SIGKILLs, " << mid_job << " of them mid-job; " << stormed_rows
            << " results, as a calm run's\n";
}

}  // namespace
}  // namespace crest
