#include "auth.h"

#include <sstream>

#include "crest/common/str_cat.h"

namespace crest::crestd {
namespace {

// "ipv4:127.0.0.1:5432" → "ipv4:127.0.0.1"; "unix:/run/x" stays.
std::string PeerHost(const std::string& peer) {
  if (peer.starts_with("unix:")) return peer;
  const auto colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

}  // namespace

absl::StatusOr<std::string> Authorizer::Check(const grpc::CallbackServerContext& context,
                                              bool mutating, const char* method) const {
  if (!enabled()) return PeerHost(context.peer());
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  if (it != metadata.end()) {
    const std::string value(it->second.data(), it->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.starts_with(kBearer)) {
      const auto found = name_by_token_.find(value.substr(kBearer.size()));
      if (found != name_by_token_.end()) return found->second;
    }
  }
  if (!mutating && !protect_reads_) return PeerHost(context.peer());
  return absl::UnauthenticatedError(
      StrCat(method,
             " needs a valid bearer token (metadata \"authorization: Bearer TOKEN\"; "
             "crest --token-file FILE)"));
}

absl::StatusOr<std::map<std::string, std::string>> LoadTokens(const std::string& path,
                                                               const Env& env) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return absl::InvalidArgumentError(StrCat("--token-file: ", text.status().message()));
  std::istringstream in(*text);
  std::map<std::string, std::string> tokens;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string a, b, extra;
    words >> a >> b >> extra;
    if (a.empty() || a.starts_with('#')) continue;
    if (!extra.empty()) {
      return absl::InvalidArgumentError(
          StrCat("--token-file ", path, ":", number, ": expected \"NAME TOKEN\" or \"TOKEN\""));
    }
    const std::string token = b.empty() ? a : b;
    const std::string name = b.empty() ? StrCat("token-", tokens.size() + 1) : a;
    if (token.size() < 16) {
      return absl::InvalidArgumentError(
          StrCat("--token-file ", path, ":", number, ": a token must be at least 16 characters"));
    }
    tokens[token] = name;
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(StrCat("--token-file ", path, ": holds no token"));
  }
  return tokens;
}

}  // namespace crest::crestd
