// FNV-1a, 64 bits: a stable fingerprint of a text (file contents, parameters),
// the same on every platform and in every release. Not for security.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace crest {

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Fnv1a64 as 16 lower-case hex digits, as files and replays are named by it.
inline std::string Fnv1a64Hex(std::string_view text) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(text)));  // NOLINT(runtime/int)
  return hex;
}

}  // namespace crest
