// crestd among many clients, some careless, some hostile: each test is one
// finding of an outside audit, reproduced, and fails on the crestd the audit
// tried (issue 27). No request takes the node down; no client touches
// another's work. A Server runs in this process; the crest and crestd
// executables where their exit codes are the point.
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "crest/v1/crest.grpc.pb.h"
#include "db_files.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"
#include "hostile_requests.h"
#include "in_process_crestd.h"
#include "log_wait.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

using crest::testing::Gemm;

using std::chrono::seconds;

constexpr const char* kAlice = "alice-0123456789abcdef";
constexpr const char* kBob = "bob-0123456789abcdef00";
constexpr const char* kOps = "ops-0123456789abcdef00";

// A d_ff sweep of 4·window+2 forward GEMMs on the H100 (model backend).
std::string DffSpec(int window) {
  return "{\"version\": 1, \"gpu\": \"h100\", \"dff\": [{\"hidden\": 4096, \"window\": " +
         std::to_string(window) + "}]}";
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

class HostileClients : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> args = {}) {
    std::string why;
    ASSERT_TRUE(daemon_.Start(dir_.path(), args, &why)) << why;
    stub_ = daemon_.Stub();
  }
  void StartWithTokens(std::vector<std::string> args = {}) {
    testing::WriteSecret(dir_.File("tokens"), std::string("alice ") + kAlice + "\nbob " + kBob +
                                                  "\nops " + kOps + " operator\n");
    args.insert(args.end(), {"--token-file", dir_.File("tokens")});
    Start(args);
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token = "") {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + seconds(30));
    if (!token.empty()) context->AddMetadata("authorization", std::string("Bearer ") + token);
    return context;
  }

  grpc::Status Submit(const std::string& spec, const std::string& token, v1::Job* job) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(spec);
    v1::SubmitJobResponse response;
    const grpc::Status s = stub_->SubmitJob(Context(token).get(), request, &response);
    *job = response.job();
    return s;
  }

  grpc::Status Cancel(int64_t id, const std::string& token, v1::Job* job = nullptr) {
    v1::CancelJobRequest request;
    request.set_id(id);
    v1::Job out;
    const grpc::Status s = stub_->CancelJob(Context(token).get(), request, &out);
    if (job != nullptr) *job = out;
    return s;
  }

  v1::Job Get(int64_t id) {
    v1::GetJobRequest request;
    request.set_id(id);
    v1::Job job;
    EXPECT_TRUE(stub_->GetJob(Context().get(), request, &job).ok());
    return job;
  }

  static bool Ended(const v1::Job& j) {
    return j.state() == v1::JOB_STATE_DONE || j.state() == v1::JOB_STATE_FAILED ||
           j.state() == v1::JOB_STATE_CANCELLED;
  }

  v1::Job WaitEnded(int64_t id) {
    v1::Job job;
    for (int i = 0; i < 3000; ++i) {
      job = Get(id);
      if (Ended(job)) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " never ended";
    return job;
  }

  // Opens a Sweep stream of `spec` and reads until the job has `done` GEMMs.
  struct OpenSweep {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader;
    int64_t job = 0;
  };
  OpenSweep Sweep(const std::string& spec, int64_t done, const std::string& token = "") {
    OpenSweep s;
    s.context = Context(token);
    v1::SweepRequest request;
    request.mutable_spec()->set_json(spec);
    s.reader = stub_->Sweep(s.context.get(), request);
    v1::JobEvent event;
    while (s.reader->Read(&event)) {
      s.job = event.job().id();
      if (event.job().done() >= done) break;
    }
    return s;
  }
  static void Close(OpenSweep& s) {
    s.context->TryCancel();
    (void)s.reader->Finish();
  }

  testing::TempDir dir_;
  testing::InProcessCrestd daemon_;
  std::unique_ptr<v1::Crest::Stub> stub_;
};

// 1. A range at int64's end looped without end: crestd grew 0.3 GB/s.
TEST_F(HostileClients, ASpecRangeAtTheEndOfInt64IsRefusedAtOnceNamingTheFieldAndLimit) {
  Start();
  const std::string spec =
      R"({"gpu": "h100", "gemms": [{"m": {"from": 9223372036854775807, "to": 9223372036854775807}, "n": 1, "k": 1}]})";
  v1::Job job;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status s = Submit(spec, "", &job);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "spec.gemms[0].m.from: is 9223372036854775807; it must be from 0 to 16777216");
  // A plan over --max-job-gemms is refused while it expands, naming the flag.
  const grpc::Status big = Submit(
      R"({"gpu": "h100", "gemms": [{"m": {"from": 1, "to": 1000}, "n": {"from": 1, "to": 1000}, "k": 64}]})",
      "", &job);
  EXPECT_EQ(big.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(big.error_message().find("(--max-job-gemms)"), std::string::npos)
      << big.error_message();
  // The CLI says the same and exits 2 (it aborted with std::bad_alloc).
  testing::WriteBytes(dir_.File("spec.json"), spec);
  const auto cli = testing::RunCommand(std::string(CREST_BIN) + " sweep --spec " +
                                       dir_.File("spec.json") + " --db " + dir_.File("cli.db"));
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
  EXPECT_NE(cli.err.find("spec.gemms[0].m.from"), std::string::npos) << cli.err;
}

// 2. A Sweep that matched a queued job attached to it, and its leaving
// cancelled the other client's job.
TEST_F(HostileClients, LeavingASweepCancelsOnlyAJobItCreatedAndNoOneElseWaitsOn) {
  Start({"--model-gemm-delay-ms", "20"});
  const std::string spec = DffSpec(64);  // 258 GEMMs: ~5 s
  v1::Job submitted;
  ASSERT_TRUE(Submit(spec, "", &submitted).ok());
  OpenSweep attached = Sweep(spec, 1);
  ASSERT_EQ(attached.job, submitted.id()) << "the same spec attaches to the queued job";
  Close(attached);
  ASSERT_TRUE(testing::WaitForLog(
      daemon_, "event=job_client_left job=" + std::to_string(submitted.id()) + " "))
      << "crestd never saw the client leave:\n"
      << daemon_.log();
  EXPECT_FALSE(Ended(Get(submitted.id()))) << "another client's job was cancelled";
  ASSERT_TRUE(Cancel(submitted.id(), "").ok());

  // A Sweep's own job, watched by another client too, outlives its leaving.
  OpenSweep own = Sweep(DffSpec(63), 1);
  auto watch_context = Context();
  v1::WatchJobRequest watch;
  watch.set_id(own.job);
  auto watcher = stub_->WatchJob(watch_context.get(), watch);
  v1::JobEvent first;
  ASSERT_TRUE(watcher->Read(&first));
  Close(own);
  ASSERT_TRUE(
      testing::WaitForLog(daemon_, "event=sweep_client_left job=" + std::to_string(own.job) + " "))
      << "crestd never saw the client leave:\n"
      << daemon_.log();
  EXPECT_FALSE(Ended(Get(own.job))) << "a job someone else waits on was cancelled";
  watch_context->TryCancel();
  (void)watcher->Finish();
  ASSERT_TRUE(Cancel(own.job, "").ok());

  // Alone, a Sweep's leaving still cancels the job it created.
  OpenSweep alone = Sweep(DffSpec(62), 1);
  Close(alone);
  EXPECT_EQ(WaitEnded(alone.job).state(), v1::JOB_STATE_CANCELLED);
}

// 3. Any token holder could cancel any job.
TEST_F(HostileClients, ATokenHolderCancelsOnlyItsOwnJobsUnlessItIsAnOperator) {
  StartWithTokens({"--model-gemm-delay-ms", "20"});
  v1::Job a, b;
  ASSERT_TRUE(Submit(DffSpec(64), kAlice, &a).ok());
  ASSERT_TRUE(Submit(DffSpec(63), kAlice, &b).ok());
  EXPECT_EQ(Get(a.id()).submitted_by(), "alice");
  const grpc::Status denied = Cancel(a.id(), kBob);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(denied.error_message().find("submitted by 'alice'"), std::string::npos)
      << denied.error_message();
  EXPECT_FALSE(Ended(Get(a.id())));
  EXPECT_TRUE(Cancel(a.id(), kAlice).ok()) << "its submitter may";
  EXPECT_TRUE(Cancel(b.id(), kOps).ok()) << "an operator may";
  EXPECT_EQ(WaitEnded(b.id()).state(), v1::JOB_STATE_CANCELLED);
}

// 4. 3 MiB spec names made 8 listings of 1000 jobs take crestd to 3.98 GB.
TEST_F(HostileClients, NamesAreBoundedAtSubmitAndListingsPageWithoutSpecs) {
  Start();
  v1::Job job;
  const std::string huge_name = std::string(3 << 20, 'n');
  const grpc::Status refused = Submit(
      R"({"name": ")" + huge_name + R"(", "gpu": "h100", "dff": [{"hidden": 4096, "window": 1}]})",
      "", &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(refused.error_message().size(), 200u);
  std::vector<int64_t> ids;
  for (int w = 1; w <= 5; ++w) {
    ASSERT_TRUE(Submit(R"({"name": "study )" + std::to_string(w) +
                           R"(", "gpu": "h100", "dff": [{"hidden": 4096, "window": )" +
                           std::to_string(w) + "}]}",
                       "", &job)
                    .ok());
    ids.push_back(job.id());
  }
  std::vector<int64_t> listed;
  int64_t before = 0;
  for (int page = 0; page < 10; ++page) {
    v1::ListJobsRequest request;
    request.set_limit(2);
    request.set_before_id(before);
    v1::ListJobsResponse response;
    ASSERT_TRUE(stub_->ListJobs(Context().get(), request, &response).ok());
    for (const auto& j : response.jobs()) {
      EXPECT_TRUE(j.spec_json().empty()) << "listings leave spec bodies out";
      listed.push_back(j.id());
    }
    before = response.next_before_id();
    if (before == 0) break;
  }
  EXPECT_EQ(listed, std::vector<int64_t>(ids.rbegin(), ids.rend()))
      << "every job once, newest first";
  EXPECT_FALSE(Get(ids[0]).spec_json().empty()) << "GetJob has the spec";
}

TEST_F(HostileClients, AListingPageEndsAtItsByteBudgetAndSaysWhereTheNextStarts) {
  Start({"--max-list-bytes", "150"});  // a job row is ~100 bytes
  v1::Job job;
  for (int w = 1; w <= 3; ++w) ASSERT_TRUE(Submit(DffSpec(w), "", &job).ok());
  v1::ListJobsRequest request;
  request.set_limit(100);
  v1::ListJobsResponse response;
  ASSERT_TRUE(stub_->ListJobs(Context().get(), request, &response).ok());
  ASSERT_EQ(response.jobs_size(), 1) << "the byte budget ends the page, not the limit";
  EXPECT_EQ(response.next_before_id(), response.jobs(0).id());
}

// 5. Tokenless WatchJob streams left authorised Sweeps RESOURCE_EXHAUSTED.
TEST_F(HostileClients, CallersWithoutATokenCannotTakeTheStreamsOfAuthorisedOnes) {
  StartWithTokens(
      {"--model-gemm-delay-ms", "20", "--max-streams", "4", "--max-anonymous-streams", "2"});
  v1::Job job;
  ASSERT_TRUE(Submit(DffSpec(64), kAlice, &job).ok());
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::JobEvent>>> watchers;
  v1::WatchJobRequest watch;
  watch.set_id(job.id());
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(Context());
    watchers.push_back(stub_->WatchJob(contexts.back().get(), watch));
    v1::JobEvent first;
    ASSERT_TRUE(watchers.back()->Read(&first)) << "anonymous stream " << i;
  }
  auto third_context = Context();
  auto third = stub_->WatchJob(third_context.get(), watch);
  v1::JobEvent event;
  while (third->Read(&event)) {
  }
  const grpc::Status refused = third->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("--max-anonymous-streams"), std::string::npos)
      << refused.error_message();
  OpenSweep authorised = Sweep(DffSpec(3), 0, kBob);  // its first event: queued
  EXPECT_NE(authorised.job, 0) << "an authorised Sweep still gets a stream";
  Close(authorised);
  for (auto& c : contexts) c->TryCancel();
  for (auto& w : watchers) (void)w->Finish();
  EXPECT_TRUE(Cancel(job.id(), kAlice).ok());
}

// 5. With tokens, a whole-database export (host names, GPU UUIDs, specs)
// needs one, unless the operator opts out.
TEST_F(HostileClients, ExportNeedsATokenWhenTokensAreOnUnlessTheOperatorOptsOut) {
  StartWithTokens();
  const auto first_chunk = [&](const std::string& token) {
    auto context = Context(token);
    auto reader = stub_->ExportResults(context.get(), v1::ExportResultsRequest());
    v1::ExportChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish();
  };
  const grpc::Status anonymous = first_chunk("");
  EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << anonymous.error_message();
  EXPECT_TRUE(first_chunk(kBob).ok());
  daemon_.Stop();
  StartWithTokens({"--public-export"});
  EXPECT_TRUE(first_chunk("").ok());
}

// 5. One ExportResults reader that stopped reading blocked every other export
// for as long as it stayed connected.
TEST_F(HostileClients, AnExportReaderThatStopsReadingIsCutOffAndOthersExport) {
  {  // A database of ~48 MiB, more than transport buffers hold.
    const absl::Status made = testing::MakeDatabase(dir_.File("crest.db"));
    ASSERT_TRUE(made.ok()) << made;
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("crest.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "CREATE TABLE ballast(b BLOB); INSERT INTO ballast VALUES "
                         "(randomblob(48000000));",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  Start({"--stream-write-timeout", "1"});
  auto stalled_context = Context();
  auto stalled = stub_->ExportResults(stalled_context.get(), v1::ExportResultsRequest());
  v1::ExportChunk chunk;
  ASSERT_TRUE(stalled->Read(&chunk)) << "the first chunk";
  // ...and no more reads: the next export waits for the watchdog, not for it.
  const auto start = std::chrono::steady_clock::now();
  grpc::Status other;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto context = Context();
    auto reader = stub_->ExportResults(context.get(), v1::ExportResultsRequest());
    int64_t bytes = 0;
    while (reader->Read(&chunk)) bytes += static_cast<int64_t>(chunk.data().size());
    other = reader->Finish();
    if (other.ok()) {
      EXPECT_GT(bytes, 48'000'000);
    }
  } while (!other.ok() && std::chrono::steady_clock::now() - start < seconds(20));
  EXPECT_TRUE(other.ok()) << other.error_message();
  EXPECT_NE(daemon_.log().find("slow_reader"), std::string::npos);
  stalled_context->TryCancel();
  (void)stalled->Finish();
}

// 6. Two crestd on one state directory both ran its queue.
TEST_F(HostileClients, ASecondCrestdOnTheStateDirectoryIsRefusedNamingTheHolder) {
  Start();
  testing::InProcessCrestd second;
  std::string why;
  EXPECT_FALSE(second.Start(dir_.path(), {}, &why));
  EXPECT_NE(why.find("is in use by another crestd (pid " + std::to_string(getpid())),
            std::string::npos)
      << why;
  const auto process = testing::RunCommand(std::string(CRESTD_BIN) + " --listen 127.0.0.1:0 " +
                                           "--state-dir " + dir_.path());
  EXPECT_EQ(process.exit_code, 1) << process.err;
  EXPECT_NE(process.err.find("in use by another crestd"), std::string::npos) << process.err;
  daemon_.Stop();
  EXPECT_TRUE(second.Start(dir_.path(), {}, &why)) << "free once the holder stops: " << why;
}

// 7. A catalogue crestd left behind could not be read without write access.
TEST_F(HostileClients, AUserWithoutWriteAccessReadsWhatCrestdLeft) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the reader as nobody";
  if (testing::RunCommand("command -v runuser").exit_code != 0) GTEST_SKIP() << "no runuser";
  if (testing::RunCommand("runuser -u nobody -- test -x " + std::string(CREST_BIN)).exit_code !=
      0) {
    GTEST_SKIP() << "nobody cannot run " << CREST_BIN << " (a private build directory)";
  }
  const std::string share = "/tmp/crest-readonly-share-" + std::to_string(getpid());
  std::filesystem::remove_all(share);
  std::filesystem::create_directories(share);
  Start();
  v1::Job job;
  ASSERT_TRUE(Submit(DffSpec(2), "", &job).ok());
  EXPECT_EQ(WaitEnded(job.id()).state(), v1::JOB_STATE_DONE);
  daemon_.Stop();  // cleanly: no -wal, no -shm left
  std::filesystem::copy_file(dir_.File("crest.db"), share + "/crest.db");
  std::filesystem::permissions(
      share, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                 std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                 std::filesystem::perms::others_exec);
  for (const std::string command :
       {"db check", "db stats", "lookup --gpu h100 --m 8192 --n 4096 --k 10816",
        "dff --gpu h100 --hidden 4096 --window 2"}) {
    const auto r = testing::RunCommand("runuser -u nobody -- " + std::string(CREST_BIN) + " " +
                                       command + " --db " + share + "/crest.db");
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.err.find("readonly"), std::string::npos) << command << ": " << r.err;
  }
  std::filesystem::remove_all(share);
}

// 8. A token file ending in \r\n, or CREST_TOKEN with a newline, aborted the
// client (exit 134); a server file's NAME TOKEN line got no hint.
TEST_F(HostileClients, ClientTokensAreTrimmedAndCheckedAndNeverAbortTheClient) {
  StartWithTokens();
  const std::string crest = std::string(CREST_BIN) + " --server " + daemon_.address();
  const std::string submit = " jobs submit --spec " + dir_.File("spec.json");
  testing::WriteBytes(dir_.File("spec.json"), DffSpec(1));
  testing::WriteBytes(dir_.File("crlf"), std::string(kAlice) + "\r\n");
  const auto crlf = testing::RunCommand(crest + " --token-file " + dir_.File("crlf") + submit);
  EXPECT_EQ(crlf.exit_code, 0) << crlf.err;
  const auto env = testing::RunCommand("CREST_TOKEN=" + Quote(std::string(kAlice) + "\n") + " " +
                                       crest + submit);
  EXPECT_EQ(env.exit_code, 0) << env.err;
  testing::WriteBytes(dir_.File("server-line"), std::string("alice ") + kAlice + "\n");
  const auto line =
      testing::RunCommand(crest + " --token-file " + dir_.File("server-line") + submit);
  EXPECT_EQ(line.exit_code, 2) << line.err;
  EXPECT_NE(line.err.find("give the client only the token"), std::string::npos) << line.err;
  testing::WriteBytes(dir_.File("control"), std::string("alice\x01") + kAlice + "\n");
  const auto control =
      testing::RunCommand(crest + " --token-file " + dir_.File("control") + submit);
  EXPECT_EQ(control.exit_code, 2) << control.err;
  EXPECT_NE(control.err.find("not printable ASCII"), std::string::npos) << control.err;
  const auto wrong =
      testing::RunCommand("CREST_TOKEN=" + std::string(kAlice) + "x " + crest + submit);
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("not one of this crestd's"), std::string::npos) << wrong.err;
}

// 9. Two `crest sweep` into one file each reported every row as new.
TEST_F(HostileClients, TwoSweepsIntoOneFileCountOnlyTheRowsEachAdded) {
  const std::string db = dir_.File("shared.db");
  const std::string sweep =
      std::string(CREST_BIN) + " sweep --gpu h100 --hidden 4096 --window 512 --json --db " + db;
  const auto two = testing::RunCommand("(" + sweep + " > " + dir_.File("a.json") + ") & (" + sweep +
                                       " > " + dir_.File("b.json") + "); wait");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto new_results = [&](const std::string& file) {
    const std::string text = testing::ReadBytes(file);
    const auto at = text.find("\"new_results\":");
    EXPECT_NE(at, std::string::npos) << text.substr(0, 300);
    return at == std::string::npos ? 0 : std::stoll(text.substr(at + 14));
  };
  const int64_t total = new_results(dir_.File("a.json")) + new_results(dir_.File("b.json"));
  auto predictions = testing::CountPredictions(db);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_EQ(total, *predictions) << "each counts what it inserted";
}

// 10. Rows deleted by another process still answered as measured.
TEST_F(HostileClients, ResultsDeletedByAnotherProcessNoLongerAnswerAsMeasured) {
  const tuner::GemmShape g = Gemm(8192, 4096, 10816);
  {
    const absl::Status added =
        testing::AddMeasuredOnFakeH100(dir_.File("crest.db"), {&g, 1}, 1000.0);
    ASSERT_TRUE(added.ok()) << added;
  }
  Start();
  const auto source = [&] {
    v1::LookupGemmRequest request;
    request.set_gpu("h100");
    request.mutable_gemm()->set_m(g.m);
    request.mutable_gemm()->set_n(g.n);
    request.mutable_gemm()->set_k(g.k);
    v1::LookupGemmResponse response;
    const grpc::Status s = stub_->LookupGemm(Context().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.source();
  };
  ASSERT_EQ(source(), v1::SOURCE_MEASURED);
  ASSERT_EQ(source(), v1::SOURCE_MEASURED) << "cached";
  sqlite3* raw = nullptr;  // a person with sqlite3: foreign keys off, as its default
  ASSERT_EQ(sqlite3_open(dir_.File("crest.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DELETE FROM measurements", nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  EXPECT_EQ(source(), v1::SOURCE_PREDICTED) << "the deleted measurement still answered";
}

// 11. The rest of the audit's list.
TEST_F(HostileClients, UnknownEnumsAreRefusedAndErrorsShowNoServerPaths) {
  Start();
  v1::LookupGemmRequest lookup;
  lookup.set_gpu("h100");
  lookup.mutable_gemm()->set_m(64);
  lookup.mutable_gemm()->set_n(64);
  lookup.mutable_gemm()->set_k(64);
  lookup.mutable_gemm()->set_dtype(static_cast<v1::DType>(99));
  v1::LookupGemmResponse looked;
  const grpc::Status dtype = stub_->LookupGemm(Context().get(), lookup, &looked);
  EXPECT_EQ(dtype.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(dtype.error_message().find("gemm.dtype: unknown dtype value 99"), std::string::npos)
      << dtype.error_message();
  v1::QueryDffRequest dff;
  dff.set_gpu("h100");
  dff.set_hidden(4096);
  dff.set_pass(static_cast<v1::Pass>(7));
  v1::QueryDffResponse ranked;
  const grpc::Status pass = stub_->QueryDff(Context().get(), dff, &ranked);
  EXPECT_EQ(pass.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << pass.error_message();

  v1::GetJobRequest missing;
  missing.set_id(424242);
  v1::Job job;
  const grpc::Status not_found = stub_->GetJob(Context().get(), missing, &job);
  EXPECT_EQ(not_found.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(not_found.error_message().find(dir_.path()), std::string::npos)
      << not_found.error_message();
}

TEST_F(HostileClients, ATokenGivenTwoNamesIsRefusedAtStart) {
  testing::WriteSecret(dir_.File("tokens"),
                       std::string("alice ") + kAlice + "\nmallory " + kAlice + "\n");
  std::string why;
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", dir_.File("tokens")}, &why));
  EXPECT_NE(why.find(":2: this token is also 'alice''s"), std::string::npos) << why;
}

TEST_F(HostileClients, ACorruptPageStopsAStartThatChecksNamingTheProblem) {
  {
    std::vector<tuner::GemmShape> gemms;
    for (int64_t k = 64; k < 3000; ++k) gemms.push_back(Gemm(64, 64, k));
    const absl::Status added = testing::AddMeasuredOnFakeH100(dir_.File("crest.db"), gemms, 10.0);
    ASSERT_TRUE(added.ok()) << added;
  }
  {  // Scribble over a page in the middle of the file.
    std::fstream f(dir_.File("crest.db"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(dir_.File("crest.db")) / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::string why;
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--check-on-start"}, &why));
  EXPECT_NE(why.find("failed its quick check"), std::string::npos) << why;
}

// Issue 40, item 6: a client chose its own priority (2^31 - 1 jumped the
// queue; -2^31 was accepted). Now a band by role.
TEST_F(HostileClients, PrioritiesStayWithinTheBandOfTheCallersRole) {
  StartWithTokens();
  const auto submit = [&](int priority, const char* token) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(DffSpec(2));
    request.set_priority(priority);
    v1::SubmitJobResponse response;
    return stub_->SubmitJob(Context(token).get(), request, &response);
  };
  const grpc::Status high = submit(2147483647, kBob);
  EXPECT_EQ(high.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(high.error_message().rfind("priority: 2147483647 is outside -100..100", 0), 0u)
      << high.error_message();
  EXPECT_EQ(submit(-2147483647 - 1, kBob).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(submit(101, kBob).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(submit(100, kBob).ok());
  EXPECT_TRUE(submit(5000, kOps).ok()) << "an operator may raise a job";
  EXPECT_EQ(submit(2147483647, kOps).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "an operator has a band too";
}

// Item 11: /dev/zero as the token file aborted crestd (std::bad_alloc); a
// 0666 file, and tokens no client can send, were accepted.
TEST_F(HostileClients, ATokenFileMustBeSmallPrivateAndHoldSendableTokens) {
  std::string why;
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", "/dev/zero"}, &why));
  EXPECT_NE(why.find("--token-file /dev/zero: not a regular file"), std::string::npos) << why;
  testing::WriteBytes(dir_.File("open"), std::string("alice ") + kAlice + "\n");
  std::filesystem::permissions(dir_.File("open"), std::filesystem::perms(0666));
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", dir_.File("open")}, &why));
  EXPECT_NE(why.find("mode 0666 lets others read or change the tokens"), std::string::npos) << why;
  testing::WriteSecret(dir_.File("big"), std::string(2 << 20, 'x'));
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", dir_.File("big")}, &why));
  EXPECT_NE(why.find("larger than 1048576 bytes"), std::string::npos) << why;
  testing::WriteSecret(dir_.File("nul"), std::string("alice abc") + '\0' + "def0123456789abcdef\n");
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", dir_.File("nul")}, &why));
  EXPECT_NE(why.find(":1: a token may hold printable ASCII only"), std::string::npos) << why;
  testing::WriteSecret(dir_.File("utf8"), "alice caf\xc3\xa9-0123456789abcdef\n");
  EXPECT_FALSE(daemon_.Start(dir_.path(), {"--token-file", dir_.File("utf8")}, &why));
  EXPECT_NE(why.find("printable ASCII only"), std::string::npos) << why;
}

// Item 8: a 0-byte crest.db was silently made a new database, and a corrupt
// one served, unless --check-on-start was given. Both are now checked by
// default; --no-check-on-start opts out.
TEST_F(HostileClients, AnEmptyDatabaseIsRefusedByDefaultAndServedOnlyWhenTheCheckIsOff) {
  testing::WriteBytes(dir_.File("crest.db"), "");
  std::string why;
  EXPECT_FALSE(daemon_.Start(dir_.path(), {}, &why));
  EXPECT_NE(why.find("crest.db is empty (0 bytes)"), std::string::npos) << why;
  EXPECT_EQ(std::filesystem::file_size(dir_.File("crest.db")), 0u) << "left as found";
  Start({"--no-check-on-start"});
  EXPECT_GT(std::filesystem::file_size(dir_.File("crest.db")), 0u);
}

// Item 4: a request header of megabytes cost crestd seconds of CPU before
// authorisation. Headers over 8 KiB are refused by the transport; the
// caller gets an error, not an answer, and others are served.
TEST_F(HostileClients, AHugeRequestHeaderIsRefusedAndOthersAreStillServed) {
  StartWithTokens();
  v1::Job job;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status huge = Submit(DffSpec(2), std::string(8 << 20, 'a'), &job);
  const double seconds_taken =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(huge.ok());
  EXPECT_NE(huge.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << "the header reached the token check";
  std::cerr << "an 8 MiB header: " << huge.error_code() << " after " << seconds_taken << " s\n";
  // Another client, on a connection of its own (the refused one may still
  // be closing, and a call on it fails UNAVAILABLE), is served.
  grpc::ChannelArguments own;
  own.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  stub_ = v1::Crest::NewStub(
      grpc::CreateCustomChannel(daemon_.address(), grpc::InsecureChannelCredentials(), own));
  const grpc::Status other = Submit(DffSpec(2), kAlice, &job);
  EXPECT_TRUE(other.ok()) << other.error_code() << ": " << other.error_message();
}

// Item 10: server paths reached clients (WatchJob's NOT_FOUND, GetNodeInfo's
// database path).
TEST_F(HostileClients, NoServerPathReachesAClient) {
  Start();
  v1::WatchJobRequest watch;
  watch.set_id(424242);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(10));
  auto reader = stub_->WatchJob(&context, watch);
  v1::JobEvent event;
  while (reader->Read(&event)) {
  }
  const grpc::Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message().find(dir_.path()), std::string::npos) << s.error_message();
  v1::GetNodeInfoResponse info;
  ASSERT_TRUE(stub_->GetNodeInfo(Context().get(), v1::GetNodeInfoRequest(), &info).ok());
  EXPECT_EQ(info.database().path().find(dir_.path()), std::string::npos) << info.database().path();
}

// The heap this process has in use [MB]: what held plans would add to.
// Freed memory that glibc's per-thread arenas keep is not counted (it made
// resident memory vary by 25 MB between runs, whatever the queue held).
double HeapInUseMb() {
  const struct mallinfo2 heap = mallinfo2();
  return static_cast<double>(heap.uordblks + heap.hblkhd) / (1 << 20);
}

// Item 2: 33 queued jobs of 200,000-GEMM plans took crestd from 170 MB to
// 2.4 GB: each held its expanded plan while queued. Now a queued job holds
// its id; the plan is expanded when it runs.
TEST_F(HostileClients, QueuedJobsDoNotHoldTheirExpandedPlans) {
  Start({"--model-gemm-delay-ms", "2000"});
  v1::Job job;
  ASSERT_TRUE(Submit(DffSpec(2), "", &job).ok());  // holds the lane
  const auto queue = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string spec = R"({"gpu": "h100", "gemms": [{"m": {"from": 1, "to": 400}, )"
                               R"("n": {"from": 1, "to": 500}, "k": )" +
                               std::to_string(64 + i) + "}]}";
      ASSERT_TRUE(Submit(spec, "", &job).ok());
      EXPECT_EQ(job.total(), 200'000);
      EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
    }
  };
  queue(0, 4);
  const double four = HeapInUseMb();
  queue(4, 16);
  const double sixteen = HeapInUseMb();
  std::cerr << "heap in use with 4 queued jobs of 200,000 GEMMs: " << four
            << " MB; with 16: " << sixteen << " MB\n";
  EXPECT_LT(sixteen - four, 24) << "a held plan is about 16 MB a job (200,000 GemmShapes)";
}

}  // namespace
}  // namespace crest

namespace crest {
namespace {

// Item 1: 64 never-read WatchJob streams on a job of 256-byte names took
// crestd from 323 MB to 3.52 GB: each kept up to 100,000 pending results.
// Now a reader that falls behind is owed at most 512 KiB of results, and
// is told how many it was not sent.
TEST_F(HostileClients, AReaderThatFallsBehindIsOwedABoundedBacklogAndToldWhatItMissed) {
  Start();
  v1::Job blocker;
  ASSERT_TRUE(Submit(DffSpec(1), "", &blocker).ok());
  v1::Job job;
  ASSERT_TRUE(Submit(testing::NamedGemmsSpec(100, 200, 64), "", &job).ok());
  ASSERT_EQ(job.total(), 20'000);
  auto context = Context();
  v1::WatchJobRequest watch;
  watch.set_id(job.id());
  auto reader = stub_->WatchJob(context.get(), watch);
  v1::JobEvent event;
  ASSERT_TRUE(reader->Read(&event));  // its state now; then no reads until it ends
  EXPECT_EQ(WaitEnded(job.id()).state(), v1::JOB_STATE_DONE);
  int64_t received = 0, unsent = 0;
  bool final = false;
  while (reader->Read(&event)) {
    received += event.results_size();
    for (const std::string& line : event.news()) {
      if (line.find("results were not sent to this reader") != std::string::npos) {
        unsent += std::stoll(line);
      }
    }
    final = event.final();
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_TRUE(final) << "the newest state arrives";
  EXPECT_GT(unsent, 0) << "6 MB of results cannot all wait for a reader that stopped";
  EXPECT_EQ(received + unsent, 20'000) << "every result is sent or counted as not sent";
  std::cerr << "a reader that stopped: " << received << " results sent, " << unsent
            << " counted as not sent\n";
}

// A WatchJob stream of `token` on job `id`; its first event read.
struct Watcher {
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader;
  grpc::Status status;  // when it was refused
};

// Item 5: one token holder took every stream slot, the operator's too.
TEST_F(HostileClients, EachCallerHasAStreamBudgetAndTheLastSlotsAreTheOperators) {
  StartWithTokens(
      {"--model-gemm-delay-ms", "2000", "--max-streams", "8", "--max-streams-per-caller", "2"});
  v1::Job job;
  ASSERT_TRUE(Submit(DffSpec(64), kAlice, &job).ok());
  const auto open = [&](const std::string& token) {
    Watcher w;
    w.context = Context(token);
    v1::WatchJobRequest watch;
    watch.set_id(job.id());
    w.reader = stub_->WatchJob(w.context.get(), watch);
    v1::JobEvent first;
    if (!w.reader->Read(&first)) w.status = w.reader->Finish();
    return w;
  };
  std::vector<Watcher> open_streams;
  const auto open_all = [&](std::vector<const char*> tokens) {
    for (const char* token : tokens) {
      open_streams.push_back(open(token));
      EXPECT_TRUE(open_streams.back().status.ok()) << open_streams.back().status.error_message();
    }
  };
  open_all({kAlice, kAlice});
  const Watcher third = open(kAlice);
  EXPECT_EQ(third.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(third.status.error_message().find("--max-streams-per-caller"), std::string::npos)
      << third.status.error_message();
  open_all({kBob, kBob, "", ""});
  // 6 of 8 open: the last quarter is the operator's.
  const Watcher client = open(kAlice);
  EXPECT_EQ(client.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(client.status.error_message().find("kept for operator tokens"), std::string::npos)
      << client.status.error_message();
  for (int i = 0; i < 2; ++i) {
    open_streams.push_back(open(kOps));
    EXPECT_TRUE(open_streams.back().status.ok())
        << "operator stream " << i << ": " << open_streams.back().status.error_message();
  }
  const Watcher full = open(kOps);
  EXPECT_EQ(full.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(full.status.error_message().find("--max-streams 8"), std::string::npos)
      << full.status.error_message();
  for (auto& w : open_streams) w.context->TryCancel();
  for (auto& w : open_streams) (void)w.reader->Finish();
  EXPECT_TRUE(Cancel(job.id(), kAlice).ok());
}

// Item 5: the watchdog cut only streams with a write in flight; one
// watching a job that never moved held its slot for ever.
TEST_F(HostileClients, AStreamWithNothingToSendIsCutAfterTheIdleTimeout) {
  Start({"--model-gemm-delay-ms", "2000", "--stream-idle-timeout", "1"});
  v1::Job running, queued;
  ASSERT_TRUE(Submit(DffSpec(64), "", &running).ok());
  ASSERT_TRUE(Submit(DffSpec(65), "", &queued).ok());
  auto context = Context();
  v1::WatchJobRequest watch;
  watch.set_id(queued.id());
  auto reader = stub_->WatchJob(context.get(), watch);
  v1::JobEvent event;
  int events = 0;
  const auto start = std::chrono::steady_clock::now();
  while (reader->Read(&event)) ++events;
  const grpc::Status cut = reader->Finish();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(events, 1) << "its state when it began, then nothing";
  EXPECT_EQ(cut.error_code(), grpc::StatusCode::CANCELLED) << cut.error_message();
  EXPECT_LT(waited, 20) << "cut after the idle timeout, not at the call's deadline";
  EXPECT_NE(daemon_.log().find("idle_stream"), std::string::npos);
  EXPECT_EQ(Get(queued.id()).state(), v1::JOB_STATE_QUEUED) << "watching ended, the job did not";
  EXPECT_TRUE(Cancel(queued.id(), "").ok());
  EXPECT_TRUE(Cancel(running.id(), "").ok());
}

// The watchdog's cut is crestd's doing, not the client's: a Sweep stream
// cut for idling leaves the job it created to run (the client watches
// again), as it does for a WatchJob.
TEST_F(HostileClients, ASweepStreamCutForIdlingLeavesItsJobQueued) {
  Start({"--model-gemm-delay-ms", "2000", "--stream-idle-timeout", "1"});
  v1::Job running;
  ASSERT_TRUE(Submit(DffSpec(64), "", &running).ok());
  // The first job holds the one lane before the Sweep's job arrives: a
  // Sweep's job has the higher priority, so it would start first otherwise.
  ASSERT_TRUE(
      testing::WaitForLog(daemon_, "event=job_started job=" + std::to_string(running.id()) + " "))
      << daemon_.log();
  OpenSweep sweep = Sweep(DffSpec(65), 0);  // its first event: queued
  ASSERT_NE(sweep.job, 0);
  v1::JobEvent event;
  while (sweep.reader->Read(&event)) {
  }
  EXPECT_EQ(sweep.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(Get(sweep.job).state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(Cancel(sweep.job, "").ok());
  EXPECT_TRUE(Cancel(running.id(), "").ok());
}

// The audit's costly query over ±`window`, predicted, its best row only.
v1::QueryDffRequest CostlyQuery(int64_t window) {
  v1::QueryDffRequest q = testing::CostlyDffQuery(window);
  q.set_predict_only(true);
  q.set_top(1);
  return q;
}

// Item 3: one 23-byte QueryDff cost a second of CPU and an 11.8 MB answer;
// 200 of them stalled another client's LookupGemm for 120 s.
TEST_F(HostileClients, ACostlyQueryIsBoundedByItsCostAndItsAnswersSize) {
  Start({"--max-answer-bytes", "100000"});
  v1::QueryDffResponse answer;
  grpc::Status s = stub_->QueryDff(Context().get(), CostlyQuery(49'999), &answer);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("window: ", 0), 0u) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-query-gemms"), std::string::npos) << s.error_message();
  v1::QueryDffRequest wide = CostlyQuery(2000);
  wide.set_top(0);  // every row: ~4,000 of them
  s = stub_->QueryDff(Context().get(), wide, &answer);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("--max-answer-bytes"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("set top"), std::string::npos) << s.error_message();
  wide.set_top(10);
  EXPECT_TRUE(stub_->QueryDff(Context().get(), wide, &answer).ok());
}

TEST_F(HostileClients, CostlyAnswersWaitTheirTurnOffTheServingThreadsWithinEachCallersBudget) {
  StartWithTokens(
      {"--answer-threads", "1", "--answers-per-caller", "1", "--max-query-gemms", "2000000"});
  // Alice's query holds the one answer thread for a while: about 100,000
  // candidates of 9 GEMMs, the most a window may have (0.7 s on the 2-core
  // VM), so that what follows runs well inside it.
  auto alice_context = Context(kAlice);
  v1::QueryDffResponse alice_answer;
  std::mutex mu;
  std::condition_variable cv;
  bool alice_done = false;
  grpc::Status alice_status;
  v1::QueryDffRequest alice_query = CostlyQuery(65'536);
  alice_query.set_hidden(12'800);  // d_ff 34,133 +/- 65,536, clipped at 1: 99,669 candidates
  stub_->async()->QueryDff(alice_context.get(), &alice_query, &alice_answer, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    alice_status = s;
    alice_done = true;
    cv.notify_all();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // it reaches the thread
  // Her second waits for nothing: her budget is one.
  v1::QueryDffResponse answer;
  grpc::Status second = stub_->QueryDff(Context(kAlice).get(), CostlyQuery(100), &answer);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(second.error_message().find("--answers-per-caller"), std::string::npos)
      << second.error_message();
  // Bob's lookup is not a costly answer: it is served meanwhile.
  v1::LookupGemmRequest lookup;
  lookup.set_gpu("h100");
  lookup.mutable_gemm()->set_m(4096);
  lookup.mutable_gemm()->set_n(4096);
  lookup.mutable_gemm()->set_k(4096);
  v1::LookupGemmResponse found;
  EXPECT_TRUE(stub_->LookupGemm(Context(kBob).get(), lookup, &found).ok());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_FALSE(alice_done) << "the lookup was answered while the costly query ran";
  }
  // Bob's query waits behind Alice's; he leaves first, and it is never run.
  // (Each query differs: an answer in the cache is sent at once.)
  auto bob_context = Context(kBob);
  bob_context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  grpc::Status bob = stub_->QueryDff(bob_context.get(), CostlyQuery(101), &answer);
  EXPECT_EQ(bob.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << bob.error_message();
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return alice_done; });
  }
  EXPECT_TRUE(alice_status.ok()) << alice_status.error_message();
  // The pool's next turn finds Bob gone.
  EXPECT_TRUE(testing::WaitForLog(daemon_, "the caller left before", 1, 5));
  EXPECT_NE(daemon_.log().find("the caller left before its answer was computed"),
            std::string::npos);
}

// Item 6: a job had no wall-time budget.
TEST_F(HostileClients, AJobPastItsWallTimeBudgetFailsBetweenGemmsKeepingItsResults) {
  Start({"--model-gemm-delay-ms", "50", "--max-job-seconds", "0.5"});
  v1::Job job;
  ASSERT_TRUE(Submit(DffSpec(64), "", &job).ok());
  const v1::Job ended = WaitEnded(job.id());
  EXPECT_EQ(ended.state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(ended.error().find("wall-time budget of 0.5 s (--max-job-seconds)"), std::string::npos)
      << ended.error();
  EXPECT_GT(ended.done(), 0);
  EXPECT_LT(ended.done(), ended.total());
}

// Item 7: Submit and Cancel waited on SQLite under the queue's mutex while
// a sweep wrote ("database busy" after 10 s in 3 runs; p50 3.9 s).
TEST_F(HostileClients, SubmitAndCancelAreAnsweredWhileASweepWritesAsFastAsItCan) {
  Start();
  v1::Job writer;
  // 40,000 results, written as fast as the model goes.
  ASSERT_TRUE(Submit(testing::NamedGemmsSpec(200, 200, 64), "", &writer).ok());
  for (int i = 0; i < 500 && Get(writer.id()).done() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<double> seconds_each;
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    v1::Job job;
    const grpc::Status s = Submit(DffSpec(100 + i), "", &job);
    EXPECT_TRUE(s.ok()) << "submit " << i << ": " << s.error_message();
    if (s.ok()) {
      const grpc::Status c = Cancel(job.id(), "");
      EXPECT_TRUE(c.ok()) << "cancel " << i << ": " << c.error_message();
    }
    seconds_each.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const v1::Job after = Get(writer.id());
  std::sort(seconds_each.begin(), seconds_each.end());
  std::cerr << "submit + cancel while a sweep writes: p50 " << seconds_each[10] * 1e3 << " ms, max "
            << seconds_each.back() * 1e3 << " ms; the sweep had written " << after.done() << " of "
            << after.total() << "\n";
  EXPECT_LT(seconds_each.back(), 5) << "no queue call waits seconds on the sweep's writes";
  EXPECT_TRUE(Cancel(writer.id(), "").ok());
}

}  // namespace
}  // namespace crest
