#include "remote.h"


#include <cstdlib>
#include <fstream>
#include <sstream>

#include "crest/common/env.h"
#include "crest/common/str_cat.h"
#include "json_views.h"
#include "nlohmann/json.hpp"

namespace crest::cli {
namespace {

RemoteFlags& Flags() {
  static RemoteFlags flags;
  return flags;
}

absl::StatusOr<std::string> ReadText(const std::string& flag, const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return absl::InvalidArgumentError(StrCat(flag, ": ", text.status().message()));
  return *std::move(text);
}

}  // namespace

void AddRemoteFlags(CLI::App& root) {
  RemoteFlags& f = Flags();
  root.add_option("--server", f.server,
                  "ask the crestd at HOST:PORT (or unix:PATH) instead of working locally")
      ->envname("CREST_SERVER");
  root.add_option("--tls-ca", f.tls_ca, "with --server: CA certificate (PEM); turns TLS on");
  root.add_option("--tls-cert", f.tls_cert, "with --server: client certificate (PEM), mutual TLS");
  root.add_option("--tls-key", f.tls_key, "with --server: client key (PEM)");
  root.add_option("--token-file", f.token_file,
                  "with --server: file holding the bearer token (or set CREST_TOKEN)");
  root.add_option("--timeout", f.timeout_s, "with --server: seconds a call may take")
      ->capture_default_str();
}

const RemoteFlags& Remote() { return Flags(); }

absl::StatusOr<Credentials> LoadCredentials(const RemoteFlags& f) {
  Credentials c;
  c.timeout_s = f.timeout_s;
  if (f.timeout_s <= 0) {
    return absl::InvalidArgumentError(StrCat("--timeout must be positive (got ", f.timeout_s, ")"));
  }
  if (!f.token_file.empty()) {
    auto token = ReadText("--token-file", f.token_file);
    if (!token.ok()) return token.status();
    c.token = std::string(*token);
    while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == ' ')) {
      c.token.pop_back();
    }
  } else if (auto token = DefaultEnv().GetVar("CREST_TOKEN")) {
    c.token = *std::move(token);
  }
  if (f.tls_ca.empty()) {
    if (!f.tls_cert.empty() || !f.tls_key.empty()) {
      return absl::InvalidArgumentError("--tls-cert/--tls-key need --tls-ca");
    }
    c.channel = grpc::InsecureChannelCredentials();
    return c;
  }
  grpc::SslCredentialsOptions options;
  auto ca = ReadText("--tls-ca", f.tls_ca);
  if (!ca.ok()) return ca.status();
  options.pem_root_certs = *ca;
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!f.tls_cert.empty()) {
    auto cert = ReadText("--tls-cert", f.tls_cert);
    if (!cert.ok()) return cert.status();
    auto key = ReadText("--tls-key", f.tls_key);
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  c.channel = grpc::SslCredentials(options);
  return c;
}

absl::StatusOr<DaemonChannel> DaemonChannel::Open(const RemoteFlags& f) {
  auto credentials = LoadCredentials(f);
  if (!credentials.ok()) return credentials.status();
  return Open(f.server, *credentials);
}

DaemonChannel DaemonChannel::Open(const std::string& server, const Credentials& credentials) {
  DaemonChannel c;
  c.server_ = server;
  c.token_ = credentials.token;
  c.timeout_s_ = credentials.timeout_s;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  c.channel_ = grpc::CreateCustomChannel(server, credentials.channel, args);
  c.stub_ = v1::Crest::NewStub(c.channel_);
  return c;
}

std::unique_ptr<grpc::ClientContext> DaemonChannel::Context(bool with_deadline) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (with_deadline) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000)));
  }
  if (!token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
  return context;
}

absl::Status DaemonChannel::Error(const grpc::Status& status) const {
  if (status.ok()) return absl::OkStatus();
  // absl and gRPC share their numeric status codes.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      StrCat("crestd at ", server_, ": ", status.error_message()));
}

}  // namespace crest::cli
