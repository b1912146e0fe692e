// The defaults of every question, in one place. The CLI's flags, the sweep
// spec, crestd's requests (a zero or empty field means the default) and the
// Python package take them from here, or are tested to agree with them
// (tests/tuner/defaults_test.cc, tests/python/test_defaults.py).
#pragma once

#include <cstdint>
#include <string_view>

namespace crest::tuner {

inline constexpr std::string_view kDefaultRatio = "8/3";  // SwiGLU's d_ff = 8/3·h
inline constexpr int64_t kDefaultWindow = 128;   // d_ff candidates within ±128 of ⌊r·h⌋
inline constexpr int64_t kDefaultAlign = 1;      // every integer
inline constexpr int64_t kDefaultTokens = 8192;  // M of the MLP and logits GEMMs (b·s per rank)
inline constexpr int64_t kDefaultTp = 1;
inline constexpr std::string_view kDefaultDtype = "bf16";
inline constexpr std::string_view kDefaultPass = "fwd";
inline constexpr int kDefaultTop = 10;  // rows shown of each kind

}  // namespace crest::tuner
