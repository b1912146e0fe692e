#include "fleet_targets.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "crest/common/host_port.h"
#include "crest/common/str_cat.h"

namespace crest::cli {

absl::StatusOr<std::vector<std::string>> ParseTargets(const std::string& list) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(start, comma - start);
    start = comma + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    const bool unix_socket = entry.starts_with("unix:") && entry.size() > 5;
    if (!unix_socket && !ParseHostPort(entry, 1)) {
      return absl::InvalidArgumentError(StrCat(
          "--targets: '", entry, "' is not HOST:PORT (port 1..65535), [IPv6]:PORT or unix:PATH"));
    }
    if (seen.insert(entry).second) out.push_back(std::move(entry));
  }
  if (out.empty()) return absl::InvalidArgumentError("--targets: no HOST:PORT given");
  return out;
}

absl::StatusOr<std::vector<std::string>> ResolveTargets(const std::string& name_and_port) {
  std::string name = name_and_port;
  int port = kDefaultCrestdPort;
  if (name.find(':') != std::string::npos) {
    auto parsed = ParseHostPort(name, 1);
    if (!parsed) {
      return absl::InvalidArgumentError(
          StrCat("--targets-dns: '", name_and_port, "' is not NAME or NAME:PORT (port 1..65535)"));
    }
    name = parsed->host;
    port = parsed->port;
  }
  if (name.empty()) return absl::InvalidArgumentError("--targets-dns: empty name");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found); rc != 0) {
    return absl::NotFoundError(
        StrCat("--targets-dns: '", name, "' does not resolve (", gai_strerror(rc), ")"));
  }
  std::set<std::string> addresses;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, buf, sizeof buf);
      addresses.insert(StrCat(buf, ":", port));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, buf, sizeof buf);
      addresses.insert(StrCat("[", buf, "]:", port));
    }
  }
  freeaddrinfo(found);
  if (addresses.empty()) {
    return absl::NotFoundError(StrCat("--targets-dns: '", name, "' has no addresses"));
  }
  return std::vector<std::string>(addresses.begin(), addresses.end());
}

}  // namespace crest::cli
