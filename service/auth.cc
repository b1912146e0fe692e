#include "auth.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "crest/common/str_cat.h"

namespace crest::service {
namespace {

// "ipv4:127.0.0.1:5432" → "ipv4:127.0.0.1"; "unix:/run/x" stays.
std::string PeerHost(const std::string& peer) {
  if (peer.starts_with("unix:")) return peer;
  const auto colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

}  // namespace

absl::StatusOr<Caller> Authorizer::Check(const grpc::ServerContextBase& context, Access access,
                                         const char* method) const {
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
      why =
          "the token sent is not one of this crestd's (a client sends only the TOKEN of a "
          "'NAME TOKEN' line)";
    }
  }
  const bool open = access == Access::kRead        ? !protect_reads_
                    : access == Access::kSensitive ? public_export_ && !protect_reads_
                                                   : false;
  if (open) return Caller{PeerHost(context.peer()), false, false};
  return absl::UnauthenticatedError(
      StrCat(method, " needs a valid bearer token: ", why,
             " (metadata \"authorization: Bearer TOKEN\"; crest --token-file FILE)"));
}

namespace {

// A token file is a regular file of at most kMaxTokenFileBytes that only its
// owner (and its group, reading) may touch, as ssh treats a private key.
absl::Status CheckTokenFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error)
    return absl::InvalidArgumentError(StrCat("--token-file ", path, ": ", error.message()));
  if (!fs::is_regular_file(status)) {
    return absl::InvalidArgumentError(StrCat("--token-file ", path, ": not a regular file"));
  }
  const auto bytes = fs::file_size(path, error);
  if (error || bytes > kMaxTokenFileBytes) {
    return absl::InvalidArgumentError(
        StrCat("--token-file ", path, ": larger than ", kMaxTokenFileBytes, " bytes"));
  }
  const fs::perms open = fs::perms::others_all | fs::perms::group_write | fs::perms::group_exec;
  if ((status.permissions() & open) != fs::perms::none) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(status.permissions()) & 07777);
    return absl::InvalidArgumentError(
        StrCat("--token-file ", path, ": mode ", mode,
               " lets others read or change the tokens; chmod 600 (or 640) it"));
  }
  return absl::OkStatus();
}

// Printable ASCII without spaces: what an HTTP/2 header value can carry.
bool SendableToken(std::string_view token) {
  return std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

}  // namespace

absl::StatusOr<std::map<std::string, TokenHolder>> LoadTokens(const std::string& path,
                                                              const Env& env) {
  if (auto s = CheckTokenFile(path); !s.ok()) return s;
  auto text = env.ReadFile(path);
  if (!text.ok())
    return absl::InvalidArgumentError(StrCat("--token-file: ", text.status().message()));
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
    if (token.size() < 16 || token.size() > kMaxTokenBytes) {
      return absl::InvalidArgumentError(
          StrCat(where, "a token must be at least 16 characters and at most ", kMaxTokenBytes));
    }
    if (!SendableToken(token)) {
      return absl::InvalidArgumentError(
          StrCat(where, "a token may hold printable ASCII only (no client can send other bytes)"));
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

}  // namespace crest::service
