// A transformer's dimensions, the rules they must satisfy, and the head dims
// that run badly (warned of, not refused).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "crest/tuner/dtype.h"

namespace crest::tuner {

// The dimensions of one transformer layer and its training step. Every size
// is in elements. See the table of GEMMs in docs/shapes.md.
struct ModelConfig {
  int64_t hidden = 0;       // h
  int64_t heads = 0;        // a, attention (query) heads
  int64_t kv_heads = 0;     // g, key/value heads; 0 means g = a (no GQA)
  int64_t d_ff = 0;         // f, SwiGLU inner size (each of gate and up)
  int64_t vocab = 0;        // v
  int64_t seq = 0;          // s, sequence length
  int64_t micro_batch = 1;  // b, sequences per micro-batch
  int64_t tp = 1;           // t, tensor-parallel degree
  DType dtype = DType::kBf16;

  int64_t KvHeads() const { return kv_heads == 0 ? heads : kv_heads; }
  int64_t HeadDim() const { return heads == 0 ? 0 : hidden / heads; }
  int64_t Tokens() const { return micro_batch * seq; }
};

// OK, or InvalidArgument naming the first field that breaks a rule and the
// rule: sizes positive and under the limits of limits.h, h divisible by a,
// a divisible by g, and a, g, f and v divisible by t.
absl::Status ValidateModelConfig(const ModelConfig& config);

// Head dims fused attention kernels and tensor cores handle badly: not a
// multiple of 8, above 256, below 32. Empty when the config is fine.
std::vector<std::string> HeadDimWarnings(const ModelConfig& config);

}  // namespace crest::tuner
