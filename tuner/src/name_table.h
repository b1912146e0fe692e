// Internal to crest::tuner: an enum's names as one table, read both ways.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace crest::internal {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// The name of `value`; "?" when the table lacks it.
template <typename E, size_t N>
std::string_view NameOf(const NameTable<E, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "?";
}

// The value named `text`; nullopt when no name matches.
template <typename E, size_t N>
std::optional<E> Parse(const NameTable<E, N>& names, std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace crest::internal
