// FNV-1a, 64 bits: a stable fingerprint of a text (file contents, parameters),
// the same on every platform and in every release. Not for security.
#pragma once

#include <cstdint>
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

}  // namespace crest
