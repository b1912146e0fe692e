// An enum's names as one table, read both ways: the name of a value, and the
// value a name means. A table lists each value once; the names are what
// Crest prints and reads (flags, JSON, database columns, log lines).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace crest {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// The name of `value`; "?" when the table lacks it.
template <typename E, size_t N>
constexpr std::string_view NameOf(const NameTable<E, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "?";
}

// The value named `text` (exactly); nullopt when no name matches.
template <typename E, size_t N>
constexpr std::optional<E> ValueNamed(const NameTable<E, N>& names, std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace crest
