// crestd's Server in this process, with the machine faked through its Env:
// the host name it reports and records, and what it does when the machine
// refuses (a port file that cannot be written, a state directory that cannot
// be made, a key file that cannot be read) — an error that names the file
// and the system's words, never a crash or a half-started daemon.
#include "server.h"

#include <grpcpp/grpcpp.h>

#include <cerrno>

#include "crest/common/posix_error.h"
#include "crest/v1/crest.grpc.pb.h"
#include "fake_env.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest {
namespace {

service::ServerConfig Config(const testing::TempDir& dir, Env* env) {
  service::ServerConfig c;
  c.listen = "127.0.0.1:0";
  c.state_dir = dir.File("state");
  c.shutdown_grace_s = 1;
  c.env = env;
  return c;
}

std::unique_ptr<v1::Crest::Stub> StubOf(const service::Server& server) {
  return v1::Crest::NewStub(
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
}

TEST(Server, ReportsAndRecordsTheHostNameItsEnvGives) {
  testing::TempDir dir;
  testing::FakeEnv env;
  env.SetHostName("node-from-env");
  auto server = service::Server::Start(Config(dir, &env));
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = StubOf(**server);
  grpc::ClientContext info_context;
  v1::GetNodeInfoResponse info;
  ASSERT_TRUE(stub->GetNodeInfo(&info_context, v1::GetNodeInfoRequest(), &info).ok());
  EXPECT_EQ(info.host(), "node-from-env");

  grpc::ClientContext submit_context;
  v1::SubmitJobRequest request;
  request.mutable_spec()->set_json(
      R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 2}]})");
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(stub->SubmitJob(&submit_context, request, &submitted).ok());
  EXPECT_EQ(submitted.job().host(), "node-from-env");
}

TEST(Server, APortFileThatCannotBeWrittenStopsTheStartNamingTheFileAndTheError) {
  testing::TempDir dir;
  testing::FakeEnv env;
  const std::string port_file = dir.File("port");
  env.FailWrites(port_file, PosixError(ENOSPC, "cannot write '" + port_file + ".tmp'"));
  service::ServerConfig config = Config(dir, &env);
  config.port_file = port_file;
  auto server = service::Server::Start(config);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(server.status().message().find(port_file + ".tmp': No space left on device"),
            std::string::npos)
      << server.status();
}

TEST(Server, AStateDirectoryThatCannotBeMadeIsAnErrorNamingIt) {
  testing::TempDir dir;
  testing::FakeEnv env;
  service::ServerConfig config = Config(dir, &env);
  env.FailCreateDirectories(
      config.state_dir, PosixError(EACCES, "cannot create directory '" + config.state_dir + "'"));
  auto server = service::Server::Start(config);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(server.status().message().find(config.state_dir + "': Permission denied (errno 13)"),
            std::string::npos)
      << server.status();
}

TEST(Server, AnUnreadableKeyIsABadConfigNamingTheFlagTheFileAndErrno) {
  testing::TempDir dir;
  testing::FakeEnv env;
  service::ServerConfig config = Config(dir, &env);
  config.tls_cert = dir.File("server.pem");
  config.tls_key = dir.File("server.key");
  env.FailReads(config.tls_key, PosixError(EACCES, "cannot read '" + config.tls_key + "'"));
  auto server = service::Server::Start(config);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << "crestd exits 2";
  EXPECT_EQ(server.status().message(),
            "--tls-key: cannot read '" + config.tls_key + "': Permission denied (errno 13)");
}

TEST(Server, ShutdownEndsServingAndASecondShutdownIsHarmless) {
  testing::TempDir dir;
  auto server = service::Server::Start(Config(dir, nullptr));
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = StubOf(**server);
  (*server)->Shutdown();
  (*server)->Shutdown();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::GetNodeInfoResponse info;
  EXPECT_FALSE(stub->GetNodeInfo(&context, v1::GetNodeInfoRequest(), &info).ok());
}

}  // namespace
}  // namespace crest

namespace crest {
namespace {

TEST(Server, OutOfRangeCacheAndDiskFlagsAreRefusedNamingTheFlagAndTheLimit) {
  testing::TempDir dir;
  const struct {
    void (*set)(service::ServerConfig&);
    const char* says;
  } cases[] = {
      {[](service::ServerConfig& c) { c.max_db_bytes = 5; },
       "--max-db-bytes must be 0 (no cap) or at least 1048576"},
      {[](service::ServerConfig& c) { c.full_retry_s = 0; },
       "--full-retry must be between 0 and 86400"},
      {[](service::ServerConfig& c) { c.answer_cache = -1; },
       "--answer-cache must be between 0 (off) and 1000000"},
  };
  for (const auto& k : cases) {
    service::ServerConfig c = Config(dir, nullptr);
    k.set(c);
    auto server = service::Server::Start(std::move(c));
    ASSERT_FALSE(server.ok()) << k.says;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(server.status().message().find(k.says), std::string::npos) << server.status();
  }
}

}  // namespace
}  // namespace crest
