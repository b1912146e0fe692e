// Tests of crestd's service: a Server in this process on an ephemeral
// loopback port, its database filled by a real `crest sweep`; the process
// itself (signals, flags, calibrations loaded at start) with a real crestd.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"
#include "gtest/gtest.h"
#include "in_process_crestd.h"
#include "raw_message.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

class Crestd : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto sweep =
        testing::RunCommand(std::string(CREST_BIN) + " sweep --db " + dir_.File("crest.db") +
                            " --hidden 4096 --gpu h100 --window 16");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
    std::string why;
    ASSERT_TRUE(daemon_.Start(dir_.path(), {}, &why)) << why;
    channel_ = daemon_.Channel();
    stub_ = v1::Crest::NewStub(channel_);
  }

  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub_).*method)(&context, request, response);
  }

  testing::TempDir dir_;
  testing::InProcessCrestd daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Crest::Stub> stub_;
};

// A unary call of `method` with `bytes` as the request, through gRPC's
// generic stub (for methods crestd serves without a registered service):
// its status and, when OK, the answer's bytes.
std::pair<grpc::Status, std::string> CallByName(const std::shared_ptr<grpc::Channel>& channel,
                                                const std::string& method,
                                                const std::string& bytes) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const grpc::ByteBuffer request = service::ByteBufferOf(bytes);
  grpc::ByteBuffer response;
  grpc::Status status;
  bool done = false;
  std::mutex mu;
  std::condition_variable cv;
  generic.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = s;
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (!status.ok()) return {status, std::string()};
  auto answer = service::BytesOf(response);
  return {status, answer.ok() ? *std::move(answer) : std::string()};
}

// HealthCheckRequest{service}: field 1, length-delimited.
std::string HealthRequest(const std::string& service) {
  return std::string(1, '\x0a') + static_cast<char>(service.size()) + service;
}

TEST_F(Crestd, AnswersTheStandardHealthCheck) {
  // HealthCheckRequest{service: ""} serializes to no bytes.
  const auto [status, bytes] = CallByName(channel_, "/grpc.health.v1.Health/Check", "");
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(bytes, std::string("\x08\x01", 2)) << "status SERVING";
}

TEST_F(Crestd, HealthCheckKnowsTheCrestServiceAndNoOther) {
  const auto [crest, crest_bytes] =
      CallByName(channel_, "/grpc.health.v1.Health/Check", HealthRequest("crest.v1.Crest"));
  ASSERT_TRUE(crest.ok()) << crest.error_message();
  EXPECT_EQ(crest_bytes, std::string("\x08\x01", 2)) << "status SERVING";
  const auto [other, other_bytes] =
      CallByName(channel_, "/grpc.health.v1.Health/Check", HealthRequest("no.such.Service"));
  EXPECT_EQ(other.error_code(), grpc::StatusCode::NOT_FOUND) << other.error_message();
  const auto [broken, broken_bytes] =
      CallByName(channel_, "/grpc.health.v1.Health/Check", std::string("\x0a\x7f", 2));
  EXPECT_EQ(broken.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << broken.error_message();
}

TEST_F(Crestd, AMethodItDoesNotServeIsUnimplementedAndServingContinues) {
  for (const char* method :
       {"/crest.v1.Crest/NoSuchMethod", "/grpc.health.v1.Health/Watch", "/no.such.Service/Call"}) {
    const auto [status, bytes] = CallByName(channel_, method, "");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
    EXPECT_NE(status.error_message().find(method), std::string::npos) << status.error_message();
  }
  v1::GetNodeInfoResponse info;
  EXPECT_TRUE(Call(&v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &info).ok());
}

TEST_F(Crestd, NodeInfoListsBackendsDatabaseAndSaysWhenThereIsNoDevice) {
  v1::GetNodeInfoResponse info;
  ASSERT_TRUE(Call(&v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &info).ok());
  ASSERT_EQ(info.backends_size(), 2);
  EXPECT_EQ(info.backends(0).name(), "model");
  EXPECT_EQ(info.model_version(), "tilewave-2");
  ASSERT_GE(info.calibrations_size(), 2) << "the shipped H100 calibrations";
  EXPECT_NE(info.calibrations(0).find("h100-sxm-bf16"), std::string::npos) << info.calibrations(0);
  EXPECT_EQ(info.database().predictions(), 66);
  EXPECT_EQ(info.database().jobs_by_state().at("done"), 1);
  if (info.devices_size() == 0) {
    EXPECT_NE(info.device_error().find("no CUDA device"), std::string::npos) << info.device_error();
  }
}

TEST_F(Crestd, QueryDffAnswersFromTheDatabaseOrThePredictor) {
  v1::QueryDffRequest request;
  request.set_hidden(4096);
  request.set_gpu("h100");
  request.set_window(32);
  v1::QueryDffResponse stored;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, request, &stored).ok());
  EXPECT_EQ(stored.gpu(), "H100-SXM");
  EXPECT_EQ(stored.candidates(), 65);
  EXPECT_EQ(stored.predicted(), 65) << "33 from the database, 32 from the model run now";
  EXPECT_EQ(stored.missing(), 0);
  EXPECT_TRUE(stored.baseline_found());
  EXPECT_EQ(stored.baseline_d_ff(), 10922);
  for (const auto& row : stored.rows()) EXPECT_EQ(row.source(), v1::SOURCE_PREDICTED);

  request.set_predict_only(true);
  request.set_top(5);
  v1::QueryDffResponse predicted;
  ASSERT_TRUE(Call(&v1::Crest::Stub::QueryDff, request, &predicted).ok());
  EXPECT_EQ(predicted.rows_size(), 5);
  EXPECT_EQ(predicted.missing(), 0);
  EXPECT_EQ(predicted.predicted(), 65);
}

TEST_F(Crestd, LookupAndPredict) {
  v1::LookupGemmRequest lookup;
  lookup.set_gpu("h100");
  lookup.mutable_gemm()->set_m(8192);
  lookup.mutable_gemm()->set_n(4096);
  lookup.mutable_gemm()->set_k(10922);
  v1::LookupGemmResponse found;
  ASSERT_TRUE(Call(&v1::Crest::Stub::LookupGemm, lookup, &found).ok());
  EXPECT_TRUE(found.found());
  EXPECT_EQ(found.source(), v1::SOURCE_PREDICTED);
  lookup.mutable_gemm()->set_k(99);
  v1::LookupGemmResponse live;
  ASSERT_TRUE(Call(&v1::Crest::Stub::LookupGemm, lookup, &live).ok());
  EXPECT_TRUE(live.found()) << "not in the database: the model answers, labelled";
  EXPECT_EQ(live.source(), v1::SOURCE_PREDICTED);
  EXPECT_EQ(live.model_version().rfind("tilewave-2", 0), 0u) << live.model_version();
  // Nothing at all answers fp8 on an A100 (no fp8 path): not found.
  lookup.set_gpu("a100");
  lookup.mutable_gemm()->set_dtype(v1::DTYPE_FP8_E4M3);
  v1::LookupGemmResponse missing;
  ASSERT_TRUE(Call(&v1::Crest::Stub::LookupGemm, lookup, &missing).ok());
  EXPECT_FALSE(missing.found());

  v1::PredictRequest predict;
  predict.set_gpu("a100");
  predict.mutable_gemm()->set_m(2304);
  predict.mutable_gemm()->set_n(1536);
  predict.mutable_gemm()->set_k(4096);
  predict.mutable_gemm()->set_dtype(v1::DTYPE_FP16);
  v1::PredictResponse p;
  ASSERT_TRUE(Call(&v1::Crest::Stub::Predict, predict, &p).ok());
  EXPECT_EQ(p.source(), v1::SOURCE_PREDICTED);
  EXPECT_EQ(p.best().tiles(), 108);
  EXPECT_EQ(p.best().waves(), 1);
  EXPECT_EQ(p.tiles_size(), 8);
}

TEST_F(Crestd, MalformedRequestsGetInvalidArgumentNamingTheFieldAndServingContinues) {
  const auto dff = [&](auto mutate, const std::string& want) {
    v1::QueryDffRequest r;
    r.set_hidden(4096);
    r.set_gpu("h100");
    mutate(r);
    v1::QueryDffResponse out;
    const grpc::Status s = Call(&v1::Crest::Stub::QueryDff, r, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << want;
    EXPECT_NE(s.error_message().find(want), std::string::npos) << s.error_message();
  };
  dff([](auto& r) { r.set_hidden(0); }, "hidden must be positive");
  dff([](auto& r) { r.set_hidden(int64_t{1} << 40); }, "hidden must be at most");
  dff([](auto& r) { r.set_gpu(""); }, "gpu: required");
  dff([](auto& r) { r.set_gpu("h300"); }, "unknown GPU 'h300'");
  dff([](auto& r) { r.set_ratio("8/0"); }, "ratio: '8/0'");
  dff([](auto& r) { r.set_window(1000000000); }, "window must be between");
  dff([](auto& r) { r.set_tp(2000); }, "tp must be at most 1024");
  dff([](auto& r) { r.set_top(-1); }, "top:");
  const auto gemm = [&](auto mutate, const std::string& want) {
    v1::PredictRequest r;
    r.set_gpu("h100");
    r.mutable_gemm()->set_m(64);
    r.mutable_gemm()->set_n(64);
    r.mutable_gemm()->set_k(64);
    mutate(r);
    v1::PredictResponse out;
    const grpc::Status s = Call(&v1::Crest::Stub::Predict, r, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << want;
    EXPECT_NE(s.error_message().find(want), std::string::npos) << s.error_message();
  };
  gemm([](auto& r) { r.mutable_gemm()->set_m(0); }, "gemm.m must be positive");
  gemm([](auto& r) { r.mutable_gemm()->set_k(int64_t{1} << 40); }, "gemm.k must be at most");
  gemm([](auto& r) { r.mutable_gemm()->set_batch(-2); }, "gemm.batch must be positive");
  gemm([](auto& r) { r.mutable_gemm()->set_layout("XY"); }, "gemm.layout: 'XY'");
  gemm([](auto& r) { r.set_gpu("v100"); }, "V100 has no dense bf16 path");
  v1::GetNodeInfoResponse info;
  EXPECT_TRUE(Call(&v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &info).ok());
}

TEST_F(Crestd, ManyConcurrentClientsAllGetAnswers) {
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      auto stub = v1::Crest::NewStub(channel_);
      for (int i = 0; i < 50; ++i) {
        v1::QueryDffRequest r;
        r.set_hidden(4096);
        r.set_gpu("h100");
        r.set_window(16);
        v1::QueryDffResponse out;
        grpc::ClientContext context;
        if (!stub->QueryDff(&context, r, &out).ok() || out.predicted() != 33) failures++;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(CrestdProcess, SigtermStopsCleanlyWithExitZero) {
  testing::TempDir dir;
  testing::CrestdProcess daemon;
  std::string why;
  ASSERT_TRUE(daemon.Start(CRESTD_BIN, dir.path(), {"--shutdown-grace", "1"}, &why)) << why;
  auto stub = daemon.Stub();
  grpc::ClientContext context;
  v1::GetNodeInfoResponse info;  // an open connection must not delay the exit
  ASSERT_TRUE(stub->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &info).ok());
  const auto start = std::chrono::steady_clock::now();
  const int status = daemon.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::cerr << "stop took " << std::chrono::duration<double>(elapsed).count() << " s\n";
  EXPECT_LT(elapsed, std::chrono::seconds(3)) << "--shutdown-grace 1 bounds the exit";
}

}  // namespace
}  // namespace crest

namespace crest {
namespace {

// A calibration file for another GPU, made from the shipped H100 one.
std::string CalibrationFor(const testing::TempDir& dir, const std::string& gpu) {
  std::string text =
      testing::ReadBytes(std::string(CREST_SOURCE_DIR) + "/tuner/calibrations/h100-sxm-bf16.json");
  const std::string from = "\"gpu\": \"H100-SXM\"";
  text.replace(text.find(from), from.size(), "\"gpu\": \"" + gpu + "\"");
  const std::string path = dir.File(gpu + ".json");
  testing::WriteBytes(path, text);
  return path;
}

TEST(CrestdCalibrations, LoadsTheStateDirsAndTheFlagsAndAnswersWithThem) {
  testing::TempDir dir;
  const std::string own = CalibrationFor(dir, "H200");
  std::filesystem::create_directories(dir.File("calibrations"));
  std::filesystem::copy_file(CalibrationFor(dir, "GH200"), dir.File("calibrations/gh200.json"));
  testing::CrestdProcess daemon;
  std::string why;
  ASSERT_TRUE(daemon.Start(CRESTD_BIN, dir.path(), {"--calibration", own}, &why)) << why;
  auto stub = daemon.Stub();
  grpc::ClientContext context;
  v1::GetNodeInfoResponse info;
  ASSERT_TRUE(stub->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &info).ok());
  std::string all;
  for (const auto& c : info.calibrations()) all += c + "\n";
  EXPECT_NE(all.find("h200-bf16"), std::string::npos) << all;
  EXPECT_NE(all.find("gh200-bf16"), std::string::npos) << all;
  grpc::ClientContext predict_context;
  v1::PredictRequest request;
  request.mutable_gemm()->set_m(8192);
  request.mutable_gemm()->set_n(4096);
  request.mutable_gemm()->set_k(11008);
  request.set_gpu("h200");
  v1::PredictResponse p;
  ASSERT_TRUE(stub->Predict(&predict_context, request, &p).ok());
  EXPECT_TRUE(p.model_version().starts_with("tilewave-2+h200-bf16-")) << p.model_version();
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(CrestdCalibrations, ABadCalibrationIsRefusedAtStartNamingIt) {
  testing::TempDir dir;
  testing::WriteBytes(dir.File("bad.json"), "{\"schema_version\": 1, \"model\": \"tilewave-1\"}");
  const auto r =
      testing::RunCommand(std::string(CRESTD_BIN) + " --listen 127.0.0.1:0 --state-dir " +
                          dir.path() + " --calibration " + dir.File("bad.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.File("bad.json") + ": a calibration of model 'tilewave-1'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace crest
