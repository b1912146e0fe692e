// Reaching a crestd (crest/remote/channel.h): what the connection options
// are checked for before any call, how the token is read, and how a gRPC
// error reads. Nothing here connects.
#include "crest/remote/channel.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest::remote {
namespace {

using crest::testing::TempDir;
using crest::testing::WriteBytes;

// CREST_TOKEN unset for the test's length (the machine's own is restored).
class NoTokenInEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* token = std::getenv("CREST_TOKEN")) saved_ = token;
    unsetenv("CREST_TOKEN");
  }
  void TearDown() override {
    if (!saved_.empty()) setenv("CREST_TOKEN", saved_.c_str(), 1);
  }
  std::string saved_;
};

using LoadCredentialsTest = NoTokenInEnvironment;

TEST_F(LoadCredentialsTest, ATokenFileHoldsOneTokenTrimmedAndNeverPrinted) {
  TempDir dir;
  ConnectOptions options;
  options.token_file = dir.File("token");
  WriteBytes(options.token_file, "# ops token\nsecret-token-1\r\n");
  auto loaded = LoadCredentials(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->token, "secret-token-1");
  EXPECT_EQ(loaded->timeout_s, 30);

  WriteBytes(options.token_file, "alice secret-token-2\n");
  auto server_line = LoadCredentials(options);
  EXPECT_EQ(server_line.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(server_line.status().message().find("give the client only the token"),
            std::string::npos)
      << server_line.status();
  EXPECT_EQ(server_line.status().message().find("secret-token-2"), std::string::npos);

  WriteBytes(options.token_file, "tok\x01en\n");
  EXPECT_NE(LoadCredentials(options).status().message().find("character 4 is not printable"),
            std::string::npos);
  WriteBytes(options.token_file, "\n# nothing\n");
  EXPECT_NE(LoadCredentials(options).status().message().find("holds no token"), std::string::npos);
  options.token_file = dir.File("missing");
  EXPECT_NE(LoadCredentials(options).status().message().find("--token-file"), std::string::npos);
}

TEST_F(LoadCredentialsTest, WithoutATokenFileTheEnvironmentsTokenIsRead) {
  EXPECT_EQ(LoadCredentials({})->token, "");
  setenv("CREST_TOKEN", "  from-env \n", 1);
  EXPECT_EQ(LoadCredentials({})->token, "from-env");
}

// A token and a CA an in-process caller holds (crest.Client's token= and
// root_certificates=) win over the files and the environment, and a token
// in memory obeys a token file's rules, never echoed.
TEST_F(LoadCredentialsTest, ATokenAndACaInMemoryWinOverFilesAndTheEnvironment) {
  setenv("CREST_TOKEN", "from-env", 1);
  TempDir dir;
  ConnectOptions options;
  options.token_file = dir.File("missing");  // not read: the token in memory wins
  options.in_memory.token = " from-memory\n";
  EXPECT_EQ(LoadCredentials(options)->token, "from-memory");
  options.in_memory.token = "two words";
  const auto bad = LoadCredentials(options);
  EXPECT_EQ(bad.status().message().substr(0, 6), "token:") << bad.status();
  options.in_memory.token = "tok\x01en";
  EXPECT_EQ(LoadCredentials(options).status().message().find("tok"), 0u)
      << "names the source, not the token";
  EXPECT_EQ(LoadCredentials(options).status().message().find("tok\x01en"), std::string::npos);

  ConnectOptions tls;
  tls.tls_ca = dir.File("missing-ca.pem");  // not read: the PEM in memory wins
  tls.in_memory.tls_ca_pem = "-----BEGIN CERTIFICATE-----\n";
  const auto loaded = LoadCredentials(tls);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_NE(loaded->channel, nullptr);
  tls.in_memory.tls_ca_pem.clear();
  EXPECT_NE(LoadCredentials(tls).status().message().find("--tls-ca"), std::string::npos)
      << "without it, the file is read";
}

TEST_F(LoadCredentialsTest, TlsFilesGoTogetherAndTheTimeoutIsPositive) {
  ConnectOptions cert_alone;
  cert_alone.tls_cert = "client.pem";
  EXPECT_EQ(LoadCredentials(cert_alone).status().message(), "--tls-cert/--tls-key need --tls-ca");
  TempDir dir;
  ConnectOptions half;
  half.tls_ca = dir.File("ca.pem");
  WriteBytes(half.tls_ca, "not checked until the handshake");
  half.tls_cert = dir.File("client.pem");
  EXPECT_EQ(LoadCredentials(half).status().message(), "--tls-cert and --tls-key go together");
  ConnectOptions no_time;
  no_time.timeout_s = 0;
  EXPECT_EQ(LoadCredentials(no_time).status().message(), "--timeout must be positive (got 0)");
}

TEST(DaemonChannel, AGrpcErrorKeepsItsCodeAndNamesTheServer) {
  Credentials credentials;
  credentials.channel = grpc::InsecureChannelCredentials();
  const DaemonChannel channel = DaemonChannel::Open("127.0.0.1:9", credentials);
  const absl::Status s = channel.Error(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "crestd at 127.0.0.1:9: no");
  EXPECT_TRUE(channel.Error(grpc::Status::OK).ok());
}

}  // namespace
}  // namespace crest::remote
