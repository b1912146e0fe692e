// String building for messages. Debian's abseil is built with its own
// absl::string_view, so absl::StrCat does not take std::string_view; these do.
#pragma once

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
