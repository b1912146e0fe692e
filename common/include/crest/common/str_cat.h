// String building for messages. Debian's abseil is built with its own
// absl::string_view, so absl::StrCat does not take std::string_view; these do.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

namespace crest {

// Concatenates anything that streams: StrCat("m must be at most ", 16, ")").
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return std::move(out).str();
}

// `value` with `digits` decimals ("%.*f"): Decimals(2.345, 1) is "2.3".
inline std::string Decimals(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// Joins a range of streamable items with a separator.
template <typename Range>
std::string StrJoin(const Range& items, const char* separator) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out << separator;
    out << item;
    first = false;
  }
  return std::move(out).str();
}

}  // namespace crest
