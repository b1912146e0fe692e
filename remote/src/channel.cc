#include "crest/remote/channel.h"

#include <sstream>
#include <vector>

#include "crest/common/env.h"
#include "crest/common/str_cat.h"

namespace crest::remote {
namespace {

absl::StatusOr<std::string> ReadText(const std::string& flag, const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return absl::InvalidArgumentError(StrCat(flag, ": ", text.status().message()));
  return *std::move(text);
}

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The bearer token in `text` (a token file's bytes, or CREST_TOKEN): one
// token, surrounding white space (a "\r\n" ending included) trimmed, every
// character one that may travel in a gRPC header. InvalidArgument saying
// what is wrong, naming `source`, never the token itself.
absl::StatusOr<std::string> ParseToken(std::string_view text, const std::string& source) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    auto words = Words(line);
    if (!words.empty() && !words[0].starts_with('#')) lines.push_back(std::move(words));
  }
  if (lines.empty()) return absl::InvalidArgumentError(StrCat(source, ": holds no token"));
  if (lines.size() > 1) {
    return absl::InvalidArgumentError(
        StrCat(source, ": holds ", lines.size(),
               " lines; a client's token file holds one token (crestd's --token-file, with one "
               "token per line, is not a client's)"));
  }
  const std::vector<std::string>& words = lines[0];
  if (words.size() > 1) {
    return absl::InvalidArgumentError(
        StrCat(source, ": holds ", words.size(),
               " words, like a line of crestd's --token-file (NAME TOKEN); give the client only "
               "the token (the second word)"));
  }
  const std::string& token = words[0];
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          StrCat(source, ": the token's character ", i + 1,
                 " is not printable ASCII, so it cannot travel in a request header"));
    }
  }
  return token;
}

}  // namespace

absl::StatusOr<Credentials> LoadCredentials(const ConnectOptions& f) {
  Credentials c;
  c.timeout_s = f.timeout_s;
  if (f.timeout_s <= 0) {
    return absl::InvalidArgumentError(StrCat("--timeout must be positive (got ", f.timeout_s, ")"));
  }
  if (!f.in_memory.token.empty()) {
    auto token = ParseToken(f.in_memory.token, "token");
    if (!token.ok()) return token.status();
    c.token = *std::move(token);
  } else if (!f.token_file.empty()) {
    auto text = ReadText("--token-file", f.token_file);
    if (!text.ok()) return text.status();
    auto token = ParseToken(*text, StrCat("--token-file ", f.token_file));
    if (!token.ok()) return token.status();
    c.token = *std::move(token);
  } else if (auto text = DefaultEnv().GetVar("CREST_TOKEN"); text && !Words(*text).empty()) {
    auto token = ParseToken(*text, "CREST_TOKEN");
    if (!token.ok()) return token.status();
    c.token = *std::move(token);
  }
  if (f.tls_ca.empty() && f.in_memory.tls_ca_pem.empty()) {
    if (!f.tls_cert.empty() || !f.tls_key.empty()) {
      return absl::InvalidArgumentError("--tls-cert/--tls-key need --tls-ca");
    }
    c.channel = grpc::InsecureChannelCredentials();
    return c;
  }
  grpc::SslCredentialsOptions options;
  if (!f.in_memory.tls_ca_pem.empty()) {
    options.pem_root_certs = f.in_memory.tls_ca_pem;
  } else {
    auto ca = ReadText("--tls-ca", f.tls_ca);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
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

absl::StatusOr<DaemonChannel> DaemonChannel::Open(const ConnectOptions& f) {
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

}  // namespace crest::remote
