// String building for messages. Debian's abseil is built with its own
// absl::string_view, so absl::StrCat does not take std::string_view; these do.
#pragma once

#include <charconv>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

namespace crest {
namespace str_cat_internal {

// Integers that a stream prints as numbers (not the character types, not bool).
template <typename T>
inline constexpr bool kNumber =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
    !std::is_same_v<T, signed char> && !std::is_same_v<T, unsigned char> &&
    !std::is_same_v<T, wchar_t> && !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> &&
    !std::is_same_v<T, char32_t>;

// Appends what `out << value` would print on a fresh stream: text and
// integers directly (a stream costs some 3,000 instructions, and StrCat
// labels rows on crestd's answer path), anything else through a stream.
template <typename T>
void Append(std::string& out, const T& value) {
  if constexpr (kNumber<T>) {
    char digits[24];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(value);
  } else if constexpr (std::is_convertible_v<const T&, const char*>) {
    const char* text = value;
    if (text != nullptr) out.append(text);  // null: nothing
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(value));
  } else {
    std::ostringstream stream;
    stream << value;
    out.append(std::move(stream).str());
  }
}

}  // namespace str_cat_internal

// Concatenates anything that streams, as one default-formatted stream
// would print it: StrCat("m must be at most ", 16, ")").
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (str_cat_internal::Append(out, args), ...);
  return out;
}

// `value` with `digits` decimals ("%.*f"): Decimals(2.345, 1) is "2.3".
inline std::string Decimals(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// Joins a range of streamable items with a separator, each printed as StrCat
// prints it.
template <typename Range>
std::string StrJoin(const Range& items, const char* separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) str_cat_internal::Append(out, separator);
    str_cat_internal::Append(out, item);
    first = false;
  }
  return out;
}

}  // namespace crest
