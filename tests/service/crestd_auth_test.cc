// Tests of crestd's security: bearer tokens on mutating (and, when asked,
// all) calls, TLS and mutual TLS with certificates made by openssl for the
// test (a Server in this process), and the refusals at start that keep
// tokens off clear text (the crestd executable and its exit codes).
#include <chrono>

#include "crest/v1/crest.grpc.pb.h"
#include "gtest/gtest.h"
#include "in_process_crestd.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

constexpr const char* kToken = "nightly-0123456789abcdef";

class CrestdAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteSecret(dir_.File("tokens"),
                         std::string("# name token\nnightly ") + kToken + "\n");
  }

  void StartDaemon(const std::vector<std::string>& args) {
    std::string why;
    ASSERT_TRUE(daemon_.Start(dir_.path(), args, &why)) << why;
  }

  // A CA, a server certificate for 127.0.0.1 and a client certificate.
  void MakeCertificates() {
    const std::string d = dir_.path();
    const std::string script =
        "set -e; cd " + d +
        "; openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=crest-test-ca "
        "-keyout ca.key -out ca.pem 2>/dev/null"
        "; openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key "
        "-out server.csr 2>/dev/null"
        "; printf 'subjectAltName=IP:127.0.0.1' > san.ext"
        "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-extfile san.ext -out server.pem 2>/dev/null"
        "; openssl req -newkey rsa:2048 -nodes -subj /CN=laptop -keyout client.key "
        "-out client.csr 2>/dev/null"
        "; openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-out client.pem 2>/dev/null";
    const auto made = testing::RunCommand(script);
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }

  std::unique_ptr<v1::Crest::Stub> TlsStub(bool with_client_cert) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = testing::ReadBytes(dir_.File("ca.pem"));
    if (with_client_cert) {
      options.pem_cert_chain = testing::ReadBytes(dir_.File("client.pem"));
      options.pem_private_key = testing::ReadBytes(dir_.File("client.key"));
    }
    return v1::Crest::NewStub(
        grpc::CreateChannel(daemon_.address(), grpc::SslCredentials(options)));
  }

  static grpc::Status Submit(v1::Crest::Stub& stub, const std::string& token) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) context.AddMetadata("authorization", std::string("Bearer ") + token);
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_json(
        R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 4096, "window": 2}]})");
    v1::SubmitJobResponse response;
    return stub.SubmitJob(&context, request, &response);
  }

  static grpc::Status Query(v1::Crest::Stub& stub, const std::string& token) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) context.AddMetadata("authorization", std::string("Bearer ") + token);
    v1::LookupGemmRequest request;
    request.set_gpu("h100");
    request.mutable_gemm()->set_m(64);
    request.mutable_gemm()->set_n(64);
    request.mutable_gemm()->set_k(64);
    v1::LookupGemmResponse response;
    return stub.LookupGemm(&context, request, &response);
  }

  testing::TempDir dir_;
  testing::InProcessCrestd daemon_;
};

TEST_F(CrestdAuth, MutatingCallsNeedAValidTokenAndLookupsDoNot) {
  StartDaemon({"--token-file", dir_.File("tokens")});
  auto stub = daemon_.Stub();
  grpc::Status s = Submit(*stub, "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("SubmitJob needs a valid bearer token"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(Submit(*stub, "not-the-token-at-all").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Submit(*stub, kToken).ok());
  EXPECT_TRUE(Query(*stub, "").ok()) << "reads are open unless --auth-reads";
  EXPECT_NE(daemon_.log().find("client=nightly"), std::string::npos)
      << "the token's name identifies the client";
}

TEST_F(CrestdAuth, AuthReadsProtectsLookupsToo) {
  StartDaemon({"--token-file", dir_.File("tokens"), "--auth-reads"});
  auto stub = daemon_.Stub();
  EXPECT_EQ(Query(*stub, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Query(*stub, kToken).ok());
}

TEST_F(CrestdAuth, TlsServesOnlyTlsClientsThatTrustItsCa) {
  MakeCertificates();
  StartDaemon({"--tls-cert", dir_.File("server.pem"), "--tls-key", dir_.File("server.key"),
               "--token-file", dir_.File("tokens")});
  EXPECT_TRUE(Query(*TlsStub(false), "").ok());
  EXPECT_TRUE(Submit(*TlsStub(false), kToken).ok());
  EXPECT_EQ(Submit(*TlsStub(false), "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Query(*daemon_.Stub(), "").error_code(), grpc::StatusCode::UNAVAILABLE)
      << "a plaintext client cannot talk to a TLS port";
}

TEST_F(CrestdAuth, MutualTlsRefusesAClientWithoutACertificate) {
  MakeCertificates();
  StartDaemon({"--tls-cert", dir_.File("server.pem"), "--tls-key", dir_.File("server.key"),
               "--tls-client-ca", dir_.File("ca.pem")});
  EXPECT_TRUE(Query(*TlsStub(true), "").ok());
  EXPECT_EQ(Query(*TlsStub(false), "").error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(CrestdAuth, ClearTextOffLoopbackNeedsInsecureAndNeverCarriesTokens) {
  const std::string crestd = std::string(CRESTD_BIN) + " --state-dir " + dir_.path();
  auto r = testing::RunCommand(crestd + " --listen 0.0.0.0:0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a loopback address"), std::string::npos) << r.err;
  r = testing::RunCommand(crestd + " --listen 0.0.0.0:0 --insecure --token-file " +
                          dir_.File("tokens"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs TLS"), std::string::npos) << r.err;
  testing::WriteSecret(dir_.File("short"), "abc\n");
  r = testing::RunCommand(crestd + " --listen 127.0.0.1:0 --token-file " + dir_.File("short"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least 16 characters"), std::string::npos) << r.err;
  r = testing::RunCommand(crestd +
                          " --listen 127.0.0.1:0 --tls-cert /nonexistent.pem --tls-key "
                          "/nonexistent.key");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tls-key: cannot read"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace crest
