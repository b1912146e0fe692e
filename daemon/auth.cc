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

absl::StatusOr<Caller> Authorizer::Check(const grpc::CallbackServerContext& context,
                                         Access access, const char* method) const {
  if (!enabled()) return Caller{PeerHost(context.peer()), false, true};
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  const char* why = "no token was sent";  // not built on the path that succeeds
  if (it != metadata.end()) {
    const std::string value(it->second.data(), it->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (!value.starts_with(kBearer)) {
      why = "the authorization metadata does not start with \"Bearer \"";
    } else if (const auto found = holder_by_token_.find(value.substr(kBearer.size()));
               found != holder_by_token_.end()) {
      return Caller{found->second.name, true, found->second.is_operator};
    } else {
      why = "the token sent is not one of this crestd's (a client sends only the TOKEN of a "
            "'NAME TOKEN' line)";
    }
  }
  const bool open = access == Access::kRead ? !protect_reads_
                    : access == Access::kSensitive ? public_export_ && !protect_reads_
                                                   : false;
  if (open) return Caller{PeerHost(context.peer()), false, false};
  return absl::UnauthenticatedError(
      StrCat(method, " needs a valid bearer token: ", why,
             " (metadata \"authorization: Bearer TOKEN\"; crest --token-file FILE)"));
}

absl::StatusOr<std::map<std::string, TokenHolder>> LoadTokens(const std::string& path,
                                                              const Env& env) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return absl::InvalidArgumentError(StrCat("--token-file: ", text.status().message()));
  std::istringstream in(*text);
  std::map<std::string, TokenHolder> tokens;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string a, b, role, extra;
    words >> a >> b >> role >> extra;
    if (a.empty() || a.starts_with('#')) continue;
    const std::string where = StrCat("--token-file ", path, ":", number, ": ");
    if (!extra.empty() || (!role.empty() && role != "operator")) {
      return absl::InvalidArgumentError(
          StrCat(where, "expected \"NAME TOKEN\", \"NAME TOKEN operator\" or \"TOKEN\""));
    }
    const std::string token = b.empty() ? a : b;
    const std::string name = b.empty() ? StrCat("token-", tokens.size() + 1) : a;
    if (token.size() < 16) {
      return absl::InvalidArgumentError(StrCat(where, "a token must be at least 16 characters"));
    }
    if (auto seen = tokens.find(token); seen != tokens.end()) {
      return absl::InvalidArgumentError(StrCat(where, "this token is also '", seen->second.name,
                                               "''s; give each name its own token"));
    }
    tokens[token] = TokenHolder{name, role == "operator"};
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(StrCat("--token-file ", path, ": holds no token"));
  }
  return tokens;
}

}  // namespace crest::crestd
