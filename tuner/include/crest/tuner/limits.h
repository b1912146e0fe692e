// Upper bounds on user-supplied sizes. They keep every product Crest forms
// (FLOPs, bytes, tile counts) far inside int64 and refuse input that cannot
// be a real model before it reaches a GPU or a database.
#pragma once

#include <cstdint>

namespace crest::tuner {

inline constexpr int64_t kMaxGemmDim = int64_t{1} << 24;    // M, N or K [elements]
inline constexpr int64_t kMaxGemmBatch = int64_t{1} << 20;  // strided batch count
inline constexpr int64_t kMaxHidden = int64_t{1} << 18;     // 262,144
inline constexpr int64_t kMaxHeads = 4096;
inline constexpr int64_t kMaxDff = int64_t{1} << 21;    // 2,097,152
inline constexpr int64_t kMaxVocab = int64_t{1} << 23;  // 8,388,608
inline constexpr int64_t kMaxSeq = int64_t{1} << 21;
inline constexpr int64_t kMaxMicroBatch = 65536;
inline constexpr int64_t kMaxTokens = int64_t{1} << 24;  // b·s or --tokens
inline constexpr int64_t kMaxTp = 1024;
inline constexpr int64_t kMaxDffWindow = 65536;  // ± elements
inline constexpr int64_t kMaxCandidates = 100000;
// Configurations one design answer evaluates (the product of its dimension
// lists, or what a --params search finds): each is a set of GEMMs timed.
inline constexpr int64_t kMaxDesignConfigs = 20000;

}  // namespace crest::tuner
