// Tests of crestd's job queue, streams, limits, snapshots and metrics: a
// Server in this process on an ephemeral loopback port, or a crestd_testing
// process where signals, restarts or the log are the point. The model
// backend is slowed with --model-gemm-delay-ms where a job must still be
// running when the test acts on it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "in_process_crestd.h"
#include "log_wait.h"
#include "replay_tables.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

using crest::testing::HttpGet;

using std::chrono::seconds;

// A d_ff sweep of 4·window+2 forward GEMMs on the H100 (model backend).
std::string DffSpec(int window, int hidden = 4096) {
  return "{\"version\": 1, \"gpu\": \"h100\", \"dff\": [{\"hidden\": " + std::to_string(hidden) +
         ", \"window\": " + std::to_string(window) + "}]}";
}

class CrestdJobs : public ::testing::Test {
 protected:
  // A Server in this process.
  void StartDaemon(std::vector<std::string> args = {}) {
    std::string why;
    ASSERT_TRUE(daemon_.Start(dir_.path(), args, &why)) << why;
    stub_ = daemon_.Stub();
  }
  // A Server in this process that serves Prometheus metrics (MetricsPort).
  void StartDaemonWithMetrics() {
    StartDaemon({"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir_.File("mport")});
  }
  int MetricsPort() {
    std::ifstream in(dir_.File("mport"));
    int port = 0;
    EXPECT_TRUE(in >> port) << "no metrics port file";
    return port;
  }
  // A crestd_testing process, for signals, restarts and its log.
  void StartProcess(std::vector<std::string> args = {}) {
    std::string why;
    ASSERT_TRUE(process_.Start(CRESTD_TESTING_BIN, dir_.path(), args, &why)) << why;
    stub_ = process_.Stub();
  }

  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const Request& request, Response* response,
                    const std::string& token = "") {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(20));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    return ((*stub_).*method)(&context, request, response);
  }

  v1::Job Submit(const std::string& spec, int priority = 0) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(spec);
    request.set_priority(priority);
    v1::SubmitJobResponse response;
    const grpc::Status s = Call(&v1::Crest::Stub::SubmitJob, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.job();
  }

  v1::Job Get(int64_t id) {
    v1::GetJobRequest request;
    request.set_id(id);
    v1::Job job;
    EXPECT_TRUE(Call(&v1::Crest::Stub::GetJob, request, &job).ok());
    return job;
  }

  // Polls until `ready(job)` or 60 s pass.
  template <typename Pred>
  v1::Job WaitFor(int64_t id, Pred ready) {
    v1::Job job;
    for (int i = 0; i < 6000; ++i) {
      job = Get(id);
      if (ready(job)) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " never reached the state waited for";
    return job;
  }

  static bool Ended(const v1::Job& j) {
    return j.state() == v1::JOB_STATE_DONE || j.state() == v1::JOB_STATE_FAILED ||
           j.state() == v1::JOB_STATE_CANCELLED;
  }

  // Reads a job stream to its end: the events and the final status.
  struct Stream {
    std::vector<v1::JobEvent> events;
    grpc::Status status;
    int64_t results = 0;
  };
  Stream Watch(int64_t id) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    v1::WatchJobRequest request;
    request.set_id(id);
    auto reader = stub_->WatchJob(&context, request);
    Stream out;
    v1::JobEvent event;
    while (reader->Read(&event)) {
      out.results += event.results_size();
      out.events.push_back(event);
    }
    out.status = reader->Finish();
    return out;
  }

  int64_t Predictions() {
    v1::GetNodeInfoResponse info;
    EXPECT_TRUE(Call(&v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &info).ok());
    return info.database().predictions();
  }

  testing::TempDir dir_;
  testing::InProcessCrestd daemon_;
  testing::CrestdProcess process_;
  std::unique_ptr<v1::Crest::Stub> stub_;
};

TEST_F(CrestdJobs, AMeasuringSweepRacesItsLeadersAndStreamsTheRaceAsNews) {
  // A scripted device: d_ff 10920 and 10924 within 0.05%, 10918 0.8% behind,
  // the rest 20% (CloseLeadersScript).
  daemon_.make_backend =
      [](const service::Lane&,
         const sweep::SweepSpec&) -> absl::StatusOr<std::unique_ptr<tuner::Backend>> {
    auto fake = std::make_unique<testing::FakeMeasuringBackend>();
    fake->script = testing::CloseLeadersScript;
    return std::unique_ptr<tuner::Backend>(std::move(fake));
  };
  StartDaemon();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  v1::SweepRequest request;
  request.mutable_spec()->set_json(
      R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 4}],
          "measure": {"race": {"resolution": 0.005}}})");
  auto reader = stub_->Sweep(&context, request);
  std::vector<std::string> news;
  v1::JobEvent event;
  v1::JobEvent last;
  while (reader->Read(&event)) {
    news.insert(news.end(), event.news().begin(), event.news().end());
    last = event;
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(last.job().state(), v1::JOB_STATE_DONE);
  ASSERT_EQ(news.size(), 2u) << "the race's start and its standings";
  EXPECT_EQ(
      news[0].rfind("racing dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused: 3 candidates", 0), 0u)
      << news[0];
  EXPECT_EQ(news[1].rfind("race 1 of dff hidden=4096", 0), 0u) << news[1];
  EXPECT_NE(news[1].find("slower 10918"), std::string::npos) << news[1];
  EXPECT_NE(daemon_.log().find("job_race"), std::string::npos);

  // The node's answer is ordered by the race.
  grpc::ClientContext ask;
  v1::QueryDffRequest query;
  query.set_hidden(4096);
  query.set_window(4);
  query.set_gpu("h100");
  query.set_top(0);
  v1::QueryDffResponse answer;
  ASSERT_TRUE(stub_->QueryDff(&ask, query, &answer).ok());
  ASSERT_TRUE(answer.has_race());
  EXPECT_EQ(answer.race().race_id(), 1);
  EXPECT_EQ(answer.tied_with_best(), 2);
  EXPECT_EQ(answer.rows(2).d_ff(), 10918);
  EXPECT_EQ(answer.rows(2).race().verdict(), "slower");
}

TEST_F(CrestdJobs, SweepStreamsProgressAndEveryResultThenEndsWithTheJobDone) {
  StartDaemon();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  v1::SweepRequest request;
  request.mutable_spec()->set_json(DffSpec(16));
  auto reader = stub_->Sweep(&context, request);
  std::vector<v1::JobEvent> events;
  int64_t results = 0;
  v1::JobEvent event;
  while (reader->Read(&event)) {
    results += event.results_size();
    for (const auto& r : event.results()) EXPECT_EQ(r.source(), v1::SOURCE_PREDICTED);
    events.push_back(event);
  }
  const grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GE(events.size(), 2u);
  const v1::JobEvent& last = events.back();
  EXPECT_TRUE(last.final());
  EXPECT_EQ(last.job().state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(last.job().total(), 66);
  EXPECT_EQ(last.job().done(), 66);
  EXPECT_EQ(last.job().priority(), 100) << "Sweep runs at interactive priority";
  EXPECT_EQ(results, 66) << "every result reaches the stream, however coalesced";
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i].job().done(), events[i - 1].job().done()) << "progress never goes back";
  }
  EXPECT_EQ(Predictions(), 66);

  // A finished job's stream is one final event.
  const Stream again = Watch(last.job().id());
  ASSERT_TRUE(again.status.ok());
  ASSERT_EQ(again.events.size(), 1u);
  EXPECT_TRUE(again.events[0].final());
}

TEST_F(CrestdJobs, SubmittedJobsRunByPriorityThenOrderAndAnIdenticalSpecIsNotQueuedTwice) {
  StartDaemon({"--model-gemm-delay-ms", "5"});
  const v1::Job blocker = Submit(DffSpec(24));  // 98 GEMMs: ~0.5 s holding the lane
  // The others queue behind it (submitted before the lane took it, the
  // priority-10 job would rightly run first, and nothing would be tested).
  WaitFor(blocker.id(), [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; });
  const v1::Job low = Submit(DffSpec(2));
  const v1::Job high = Submit(DffSpec(3), 10);
  const v1::Job duplicate = Submit(DffSpec(2));
  EXPECT_EQ(duplicate.id(), low.id()) << "the queued job is returned, not a second one";
  for (const auto& j : {blocker, low, high}) {
    const v1::Job done = WaitFor(j.id(), Ended);
    EXPECT_EQ(done.state(), v1::JOB_STATE_DONE) << done.error();
  }
  EXPECT_LT(Get(high.id()).started_us(), Get(low.id()).started_us())
      << "priority 10 goes before an earlier priority-0 job";
  EXPECT_LE(Get(blocker.id()).finished_us(), Get(high.id()).started_us())
      << "one runner per lane: jobs never overlap";

  v1::ListJobsRequest list;
  list.set_state(v1::JOB_STATE_DONE);
  v1::ListJobsResponse listed;
  ASSERT_TRUE(Call(&v1::Crest::Stub::ListJobs, list, &listed).ok());
  EXPECT_EQ(listed.jobs_size(), 3);
}

TEST_F(CrestdJobs, CancelStopsARunningJobBetweenGemmsAndAQueuedOneAtOnce) {
  StartDaemon({"--model-gemm-delay-ms", "20"});
  const v1::Job running = Submit(DffSpec(64));  // 258 GEMMs: ~5 s
  const v1::Job queued = Submit(DffSpec(4));
  WaitFor(running.id(), [](const v1::Job& j) { return j.done() >= 3; });

  v1::CancelJobRequest cancel;
  cancel.set_id(queued.id());
  v1::Job cancelled;
  ASSERT_TRUE(Call(&v1::Crest::Stub::CancelJob, cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.done(), 0);

  cancel.set_id(running.id());
  ASSERT_TRUE(Call(&v1::Crest::Stub::CancelJob, cancel, &cancelled).ok());
  const Stream stream = Watch(running.id());
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  const v1::Job end = stream.events.back().job();
  EXPECT_EQ(end.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(end.done(), end.total());
  EXPECT_EQ(Predictions(), end.done()) << "results so far are kept, and only those";

  const grpc::Status again = Call(&v1::Crest::Stub::CancelJob, cancel, &cancelled);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(again.error_message().find("already ended"), std::string::npos);
}

TEST_F(CrestdJobs, ClosingASweepStreamCancelsItsJob) {
  StartDaemon({"--model-gemm-delay-ms", "20"});
  int64_t id = 0;
  {
    grpc::ClientContext context;
    v1::SweepRequest request;
    request.mutable_spec()->set_json(DffSpec(64));
    auto reader = stub_->Sweep(&context, request);
    v1::JobEvent event;
    while (reader->Read(&event) && event.job().done() < 3) id = event.job().id();
    id = event.job().id();
    context.TryCancel();
    (void)reader->Finish();
  }
  const v1::Job end = WaitFor(id, Ended);
  EXPECT_EQ(end.state(), v1::JOB_STATE_CANCELLED);
}

TEST_F(CrestdJobs, ClosingASweepStreamWhileEventsPourInCancelsItsJob) {
  StartDaemon();  // full speed: writes are in flight when the client leaves
  int64_t id = 0;
  {
    grpc::ClientContext context;
    v1::SweepRequest request;
    request.mutable_spec()->set_json(DffSpec(8192, 16384));  // 32,770 GEMMs
    auto reader = stub_->Sweep(&context, request);
    v1::JobEvent event;
    while (reader->Read(&event) && event.job().done() < 200) id = event.job().id();
    id = event.job().id();
    // Cancel while the reader is blocked in Read, as crest's Ctrl-C does.
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      context.TryCancel();
    });
    while (reader->Read(&event)) {
    }
    canceller.join();
    (void)reader->Finish();
  }
  const v1::Job end = WaitFor(id, Ended);
  EXPECT_EQ(end.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(end.done(), end.total());
}

TEST_F(CrestdJobs, SigkillMidJobThenRestartResumesWithNoLostOrDuplicatedRows) {
  StartProcess({"--model-gemm-delay-ms", "10"});
  const v1::Job job = Submit(DffSpec(32));  // 130 GEMMs
  WaitFor(job.id(), [](const v1::Job& j) { return j.done() >= 20; });
  process_.Stop(SIGKILL);

  StartProcess();
  const v1::Job end = WaitFor(job.id(), Ended);
  EXPECT_EQ(end.state(), v1::JOB_STATE_DONE) << end.error();
  EXPECT_EQ(end.done(), 130);
  EXPECT_EQ(Predictions(), 130) << "each GEMM exactly once";
  EXPECT_NE(
      process_.log().find("event=job_requeued job=" + std::to_string(job.id()) + " was=running"),
      std::string::npos)
      << process_.log();
}

TEST_F(CrestdJobs, SigtermEndsStreamsUnavailableAndTheJobResumesAtTheNextStart) {
  StartProcess({"--model-gemm-delay-ms", "10"});
  const v1::Job job = Submit(DffSpec(32));
  WaitFor(job.id(), [](const v1::Job& j) { return j.done() >= 5; });
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const int status = process_.Stop(SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  });
  const Stream stream = Watch(job.id());
  stopper.join();
  EXPECT_EQ(stream.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << stream.status.error_message();
  EXPECT_NE(stream.status.error_message().find("resumes when crestd starts again"),
            std::string::npos);

  StartProcess();
  const v1::Job end = WaitFor(job.id(), Ended);
  EXPECT_EQ(end.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(Predictions(), 130);
}

TEST_F(CrestdJobs, BadJobRequestsNameTheFieldAndTheDaemonKeepsServing) {
  StartDaemon();
  const auto refused = [&](const std::string& spec, const std::string& backend,
                           grpc::StatusCode code, const std::string& want) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(spec);
    request.set_backend(backend);
    v1::SubmitJobResponse response;
    const grpc::Status s = Call(&v1::Crest::Stub::SubmitJob, request, &response);
    EXPECT_EQ(s.error_code(), code) << want << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(want), std::string::npos) << s.error_message();
  };
  refused("", "", grpc::StatusCode::INVALID_ARGUMENT, "spec: empty");
  refused("{not json", "", grpc::StatusCode::INVALID_ARGUMENT, "spec");
  refused(R"({"version": 1, "gpu": "h300", "dff": [{"hidden": 4096}]})", "",
          grpc::StatusCode::INVALID_ARGUMENT, "h300");
  refused(R"({"version": 1, "dff": [{"hidden": 4096}]})", "model",
          grpc::StatusCode::INVALID_ARGUMENT, "spec.gpu");
  refused(R"({"version": 1, "gpu": "h100", "dff": [{"hidden": -4}]})", "",
          grpc::StatusCode::INVALID_ARGUMENT, "hidden");
  refused(DffSpec(4), "foo", grpc::StatusCode::INVALID_ARGUMENT, "backend: unknown backend 'foo'");
  refused(DffSpec(4), "replay", grpc::StatusCode::INVALID_ARGUMENT,
          "backend: crestd does not run replays");
  refused(R"({"version": 1, "gpu": "h100", "plan": "adaptive", "dff": [{"hidden": 4096}]})",
          "model", grpc::StatusCode::INVALID_ARGUMENT, "plan: \"adaptive\" times the candidates");

  v1::GetJobRequest get;
  get.set_id(4242);
  v1::Job job;
  EXPECT_EQ(Call(&v1::Crest::Stub::GetJob, get, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::ListJobsRequest list;
  list.set_limit(-1);
  v1::ListJobsResponse listed;
  const grpc::Status s = Call(&v1::Crest::Stub::ListJobs, list, &listed);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("limit"), std::string::npos);
  EXPECT_EQ(Submit(DffSpec(2)).total(), 10) << "still serving";
}

TEST_F(CrestdJobs, CublasltWithoutADeviceIsRefusedAsAPrecondition) {
  // The machine's GPUs are hidden from crestd (CUDA_VISIBLE_DEVICES=""), so
  // this runs where a GPU is present too.
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "", 1), 0);
  StartDaemon();
  unsetenv("CUDA_VISIBLE_DEVICES");
  v1::GetNodeInfoResponse info;
  ASSERT_TRUE(Call(&v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &info).ok());
  ASSERT_EQ(info.devices_size(), 0) << "a hidden device was listed";
  v1::SubmitJobRequest request;
  request.mutable_spec()->set_json(DffSpec(4));
  request.set_backend("cublaslt");
  v1::SubmitJobResponse response;
  const grpc::Status s = Call(&v1::Crest::Stub::SubmitJob, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("no"), std::string::npos) << s.error_message();
  request.set_backend("");  // the default is the model without a device
  EXPECT_TRUE(Call(&v1::Crest::Stub::SubmitJob, request, &response).ok());
  EXPECT_EQ(response.job().backend(), "model");
}

TEST_F(CrestdJobs, LimitsOnPlanSizeQueuedJobsStreamsAndMessageSizeEachSayWhich) {
  StartDaemon({"--max-job-gemms", "50", "--max-queued-per-client", "1", "--max-streams", "1",
               "--max-message-bytes", "2048", "--model-gemm-delay-ms", "20"});
  v1::SubmitJobRequest big;
  big.mutable_spec()->set_json(DffSpec(16));  // 66 GEMMs
  v1::SubmitJobResponse response;
  grpc::Status s = Call(&v1::Crest::Stub::SubmitJob, big, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("--max-job-gemms"), std::string::npos) << s.error_message();

  const v1::Job running = Submit(DffSpec(10));  // 42 GEMMs, ~1 s
  WaitFor(running.id(), [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; });
  Submit(DffSpec(9));  // queued: the client's one
  v1::SubmitJobRequest third;
  third.mutable_spec()->set_json(DffSpec(8));
  s = Call(&v1::Crest::Stub::SubmitJob, third, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("--max-queued-per-client"), std::string::npos);

  grpc::ClientContext first;
  v1::WatchJobRequest watch;
  watch.set_id(running.id());
  auto open = stub_->WatchJob(&first, watch);
  v1::JobEvent event;
  ASSERT_TRUE(open->Read(&event)) << "the first stream is served";
  const Stream second = Watch(running.id());
  EXPECT_EQ(second.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(second.status.error_message().find("--max-streams"), std::string::npos);
  first.TryCancel();
  (void)open->Finish();

  v1::SubmitJobRequest huge;
  huge.mutable_spec()->set_json(DffSpec(4) + std::string(4096, ' '));
  s = Call(&v1::Crest::Stub::SubmitJob, huge, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
}

TEST_F(CrestdJobs, ExportResultsStreamsAConsistentSnapshotThatOpensAsADatabase) {
  StartDaemon();
  Submit(DffSpec(16));
  WaitFor(1, Ended);
  grpc::ClientContext context;
  auto reader = stub_->ExportResults(&context, v1::ExportResultsRequest());
  std::string bytes;
  v1::ExportChunk chunk;
  int64_t total = -1;
  while (reader->Read(&chunk)) {
    EXPECT_EQ(chunk.offset(), static_cast<int64_t>(bytes.size()));
    bytes += chunk.data();
    total = chunk.total_bytes();
  }
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(static_cast<int64_t>(bytes.size()), total);
  const std::string path = dir_.File("snapshot.db");
  testing::WriteBytes(path, bytes);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM predictions", -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), 66);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".export-"), std::string::npos)
        << "the daemon's temporary snapshot is removed";
  }
}

// Each snapshot copies the whole database, so crestd writes one at a time:
// a second client asking meanwhile is told to retry, and served after.
TEST_F(CrestdJobs, ExportResultsServesOneSnapshotAtATimeAndTellsTheNextClientToRetry) {
  StartDaemon();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("crest.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "CREATE TABLE padding(b); INSERT INTO padding VALUES (zeroblob(3145728))",
                   nullptr, nullptr, nullptr),
      SQLITE_OK)
      << "a database of several 1 MiB chunks, so the first export stays open";
  sqlite3_close(db);
  const auto read_all = [](grpc::ClientReader<v1::ExportChunk>& reader) {
    v1::ExportChunk chunk;
    int64_t bytes = 0;
    while (reader.Read(&chunk)) bytes += static_cast<int64_t>(chunk.data().size());
    return bytes;
  };
  // The first client takes the stream slowly: a small receive window and no
  // window growth, so crestd cannot hand it all to the transport at once.
  grpc::ChannelArguments slow;
  slow.SetInt("grpc.http2.lookahead_bytes", 65536);
  slow.SetInt("grpc.http2.bdp_probe", 0);
  auto slow_stub = v1::Crest::NewStub(
      grpc::CreateCustomChannel(daemon_.address(), grpc::InsecureChannelCredentials(), slow));
  grpc::ClientContext first_context;
  auto first = slow_stub->ExportResults(&first_context, v1::ExportResultsRequest());
  v1::ExportChunk chunk;
  ASSERT_TRUE(first->Read(&chunk));
  ASSERT_LT(static_cast<int64_t>(chunk.data().size()), chunk.total_bytes());

  grpc::ClientContext second_context;
  auto second = stub_->ExportResults(&second_context, v1::ExportResultsRequest());
  EXPECT_EQ(read_all(*second), 0);
  const grpc::Status refused = second->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("another client"), std::string::npos)
      << refused.error_message();

  EXPECT_EQ(static_cast<int64_t>(chunk.data().size()) + read_all(*first), chunk.total_bytes());
  EXPECT_TRUE(first->Finish().ok());
  // The first client has its status a moment before crestd has let go of
  // the snapshot, so the next one retries as it was told to.
  int64_t third_bytes = 0;
  grpc::Status third_status;
  for (int attempt = 0; attempt < 100; ++attempt) {
    grpc::ClientContext third_context;
    auto third = stub_->ExportResults(&third_context, v1::ExportResultsRequest());
    third_bytes = read_all(*third);
    third_status = third->Finish();
    if (third_status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(third_status.ok()) << third_status.error_message();
  EXPECT_GT(third_bytes, 3 << 20) << "served once the first export ended";
}

TEST_F(CrestdJobs, PrometheusMetricsCountJobsResultsAndQueryLatency) {
  StartDaemonWithMetrics();
  Submit(DffSpec(16));
  WaitFor(1, Ended);
  v1::QueryDffRequest q;
  q.set_hidden(4096);
  q.set_gpu("h100");
  v1::QueryDffResponse r;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &r).ok());
  const int port = MetricsPort();
  const std::string text = HttpGet(port, "/metrics");
  EXPECT_NE(text.find("HTTP/1.0 200"), std::string::npos) << text;
  EXPECT_NE(text.find("crest_results_written_total{source=\"predicted\"} 66"), std::string::npos)
      << text;
  EXPECT_NE(text.find("crest_jobs_ended_total{state=\"done\"} 1"), std::string::npos);
  EXPECT_NE(text.find("crest_rpc_duration_seconds_count{method=\"QueryDff\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("crest_queue_depth"), std::string::npos);
  EXPECT_NE(HttpGet(port, "/other").find("404"), std::string::npos);
}

// A crestd whose database holds a fleet (a catalogue): four replayed
// devices of the shipped H100 table and one whose table is 10% slower (a
// throttled GPU). Its metrics name that device slower, with its ratio, and
// no other.
TEST_F(CrestdJobs, FleetMetricsNameTheThrottledDeviceAndNoOther) {
  const std::string db = dir_.File("crest.db");
  const std::string throttled = dir_.File("throttled.csv");
  testing::WriteScaledMlpTable(throttled, [](const std::vector<std::string>&) { return 1.10; });
  for (int seed = 1; seed <= 5; ++seed) {
    const auto sweep = testing::RunCommand(
        std::string(CREST_BIN) + " " +
        testing::ReplaySweepArgs(db, seed == 5 ? throttled : testing::kMlpTable, 130100) +
        " --replay-seed " + std::to_string(seed));
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  }
  StartDaemon({"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir_.File("mport"),
               "--fleet-check-interval", "3600"});
  // The timestamp is 0 until the first check ends (a test that took its
  // line at 0 for the check's end failed in CI under load).
  const auto checked = [](const std::string& metrics) {
    const std::string name = "\ncrest_fleet_check_timestamp_seconds ";
    const size_t at = metrics.find(name);
    return at != std::string::npos && metrics.compare(at + name.size(), 2, "0\n") != 0;
  };
  std::string text;
  for (int i = 0; i < 400 && !checked(text); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = HttpGet(MetricsPort(), "/metrics");
  }
  ASSERT_TRUE(checked(text)) << "no fleet check ended in 20 s:\n" << text;
  int slower = 0, same = 0;
  for (size_t at = text.find("\ncrest_fleet_device_slower{"); at != std::string::npos;
       at = text.find("\ncrest_fleet_device_slower{", at + 1)) {
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    (line.ends_with(" 1") ? slower : same) += 1;
  }
  EXPECT_EQ(slower, 1) << text;
  EXPECT_EQ(same, 4) << text;
  EXPECT_NE(text.find("crest_fleet_device_gemms{"), std::string::npos);
  EXPECT_NE(text.find("cublaslt=\"130100\""), std::string::npos);
  EXPECT_NE(daemon_.log().find("event=fleet_device_slower"), std::string::npos) << daemon_.log();
}

TEST_F(CrestdJobs, QueriesWhileASweepWritesAllAnswerWithoutBusyErrors) {
  StartProcess({"--model-gemm-delay-ms", "1"});
  const v1::Job job = Submit(DffSpec(256));  // 1026 GEMMs written while we query
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  std::vector<double> latencies_us;
  std::mutex mu;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      auto stub = process_.Stub();
      for (int i = 0; i < 40; ++i) {
        v1::QueryDffRequest r;
        r.set_hidden(4096);
        r.set_gpu("h100");
        v1::QueryDffResponse out;
        grpc::ClientContext context;
        const auto start = std::chrono::steady_clock::now();
        const grpc::Status s = stub->QueryDff(&context, r, &out);
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count();
        if (!s.ok()) {
          failures++;
          ADD_FAILURE() << s.error_message();
        }
        std::lock_guard<std::mutex> lock(mu);
        latencies_us.push_back(us);
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::sort(latencies_us.begin(), latencies_us.end());
  std::cerr << "QueryDff during a sweep, 8 clients x 40: p50 "
            << latencies_us[latencies_us.size() / 2] << " us, p99 "
            << latencies_us[latencies_us.size() * 99 / 100] << " us (job at "
            << Get(job.id()).done() << "/" << job.total() << ")\n";
  EXPECT_EQ(process_.log().find("busy"), std::string::npos) << process_.log();
}

// Answers are cached by results generation: a repeated query is served from
// memory, and a write (here a sweep's predictions) makes the next answer new.
TEST_F(CrestdJobs, CachedAnswersAreServedUntilASweepWritesThenComputedAnew) {
  StartDaemonWithMetrics();
  v1::QueryDffRequest q;
  q.set_hidden(4096);
  q.set_gpu("h100");
  q.set_window(8);
  v1::QueryDffResponse before;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &before).ok());
  v1::QueryDffResponse again;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &again).ok());
  EXPECT_EQ(before.SerializeAsString(), again.SerializeAsString());
  EXPECT_EQ(before.predicted(), 17) << "nothing swept yet: the model answers, labelled";

  WaitFor(Submit(DffSpec(8)).id(), Ended);
  v1::QueryDffResponse after;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &after).ok());
  EXPECT_EQ(after.predicted(), 17) << "the sweep's predictions: the same model's numbers";
  EXPECT_GT(after.rows_size(), 0);
  // That the write made the answer new shows in the metrics: two misses.

  const int port = MetricsPort();
  const std::string text = HttpGet(port, "/metrics");
  EXPECT_NE(text.find("crest_answer_cache_total{method=\"QueryDff\",outcome=\"hit\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("crest_answer_cache_total{method=\"QueryDff\",outcome=\"miss\"} 2"),
            std::string::npos)
      << text;
}

// Where a costly answer is computed: a small QueryDff on gRPC's serving
// thread while the answer pool and the job lanes are idle (the hand-off to
// the pool and back was about a third of its CPU); a large one, or any while
// a job runs (computing there cost a job about a sixth of its writes), on
// the answer pool. The metrics say which.
TEST_F(CrestdJobs, ASmallQueryIsComputedOnTheServingThreadOnlyWhileNoJobRuns) {
  StartDaemon({"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir_.File("mport"),
               "--model-gemm-delay-ms", "20"});
  const auto query = [&](int window) {
    v1::QueryDffRequest q;
    q.set_hidden(4096);
    q.set_gpu("h100");
    q.set_window(window);
    q.set_align(1);
    v1::QueryDffResponse r;
    const grpc::Status s = Call(&v1::Crest::Stub::QueryDff, q, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
  };
  const auto computed = [&](const char* thread) {
    const std::string text = HttpGet(MetricsPort(), "/metrics");
    const std::string series =
        std::string("crest_answers_computed_total{method=\"QueryDff\",thread=\"") + thread + "\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + series.size());
  };
  query(8);  // 17 candidates, 34 GEMMs
  EXPECT_EQ(computed("serving"), 1);
  EXPECT_EQ(computed("pool"), 0);
  query(700);  // 1,401 candidates, 2,802 GEMMs: over the serving thread's 2,400
  EXPECT_EQ(computed("serving"), 1);
  EXPECT_EQ(computed("pool"), 1);

  const v1::Job running = Submit(DffSpec(64));  // 258 GEMMs: ~5 s
  WaitFor(running.id(), [](const v1::Job& j) { return j.done() >= 1; });
  query(9);
  EXPECT_LT(Get(running.id()).done(), 258) << "the job ended before the query; slow it further";
  EXPECT_EQ(computed("serving"), 1) << "computed on the serving thread while a job ran";
  EXPECT_EQ(computed("pool"), 2);
  v1::CancelJobRequest cancel;
  cancel.set_id(running.id());
  v1::Job cancelled;
  ASSERT_TRUE(Call(&v1::Crest::Stub::CancelJob, cancel, &cancelled).ok());
  WaitFor(running.id(), Ended);
  // The lane is idle a moment after its job is marked ended: a small query
  // is computed on the serving thread again by the next few.
  for (int window = 10; window < 60 && computed("serving") < 2; ++window) query(window);
  EXPECT_EQ(computed("serving"), 2) << "still computed on the pool after the job ended";
}

// Another process writing into crestd's database (here the CLI's own sweep)
// moves the GPU's generation too: crestd's next answer is computed anew, not
// served from memory, though crestd wrote nothing itself.
TEST_F(CrestdJobs, AWriteByAnotherProcessMakesTheNextAnswerNew) {
  StartDaemonWithMetrics();
  v1::QueryDffRequest q;
  q.set_hidden(4096);
  q.set_gpu("h100");
  q.set_window(8);
  v1::QueryDffResponse r;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &r).ok());
  const auto sweep =
      testing::RunCommand(std::string(CREST_BIN) + " sweep --db " + dir_.File("crest.db") +
                          " --gpu h100 --hidden 4096 --window 8 --tokens 4096");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, q, &r).ok());
  const int port = MetricsPort();
  const std::string text = HttpGet(port, "/metrics");
  EXPECT_NE(text.find("crest_answer_cache_total{method=\"QueryDff\",outcome=\"miss\"} 2"),
            std::string::npos)
      << "one miss before the other process's write, one after\n"
      << text;
  EXPECT_NE(text.find("crest_answer_cache_total{method=\"QueryDff\",outcome=\"hit\"} 4"),
            std::string::npos)
      << text;
}

// A full disk during a daemon's sweep (a cap on the database file stands in
// for the disk): the job pauses, saying why, and is not failed; the database
// stays intact; when space returns the job resumes and ends with every GEMM
// written once.
TEST_F(CrestdJobs, AFullDiskPausesTheJobKeepsTheDatabaseIntactAndItResumesWhenSpaceReturns) {
  StartProcess({"--max-db-bytes", "1048576", "--full-retry", "0.2"});
  const v1::Job job = Submit(DffSpec(1024));  // 4,098 GEMMs: more than 1 MiB of rows
  const v1::Job paused = WaitFor(job.id(), [](const v1::Job& j) {
    return j.error().find("paused:") != std::string::npos || Ended(j);
  });
  EXPECT_EQ(paused.state(), v1::JOB_STATE_QUEUED) << paused.error();
  EXPECT_NE(paused.error().find("full"), std::string::npos) << paused.error();
  EXPECT_EQ(paused.error().find(dir_.path()), std::string::npos)
      << "a client never reads the node's paths: " << paused.error();
  EXPECT_LT(paused.done(), paused.total());
  const int64_t written = Predictions();
  EXPECT_GT(written, 0);
  // Retried every 0.2 s: running a moment, paused again; never failed.
  const std::string paused_again = "event=job_paused job=" + std::to_string(job.id()) + " ";
  ASSERT_TRUE(testing::WaitForLog(process_, paused_again, 4)) << "not retried:\n" << process_.log();
  const v1::Job j = Get(job.id());
  EXPECT_FALSE(Ended(j)) << j.error();
  EXPECT_LT(j.done(), j.total());
  EXPECT_EQ(process_.log().find("event=job_failed job=" + std::to_string(job.id()) + " "),
            std::string::npos)
      << process_.log();
  const auto check =
      testing::RunCommand(std::string(CREST_BIN) + " db check --db " + dir_.File("crest.db"));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  process_.Stop(SIGTERM);

  StartProcess();  // space returns
  const v1::Job done = WaitFor(job.id(), Ended);
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE) << done.error();
  EXPECT_EQ(done.done(), done.total());
  EXPECT_EQ(Predictions(), done.total()) << "each GEMM written once";
}

}  // namespace
}  // namespace crest
