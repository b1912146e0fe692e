// The one parser for HOST:PORT addresses that flags take (crestd --listen and
// --metrics-listen, crest fleet --targets): "host:50051", "10.0.0.7:0",
// "[::1]:50051". A bare IPv6 address needs its brackets.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace crest {

struct HostPort {
  std::string host;  // as written, brackets kept for IPv6
  int port = 0;
};

// nullopt unless `text` is HOST:PORT with a non-empty host and a decimal port
// in [min_port, 65535] (min_port 0 where 0 means "pick a free one").
inline std::optional<HostPort> ParseHostPort(std::string_view text, int min_port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return std::nullopt;
  }
  const std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return std::nullopt;
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // a bare IPv6 address needs brackets
  }
  int port = 0;
  const std::string_view digits = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port < min_port ||
      port > 65535) {
    return std::nullopt;
  }
  return HostPort{std::string(host), port};
}

}  // namespace crest
