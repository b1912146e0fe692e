// The operand arena of a measuring backend: one device allocation per
// backend, sized once from a sweep's plan and reused for every GEMM, so no
// GEMM allocates, fills from the host or frees anything.
//
// Layout: [inputs | outputs | workspace]. The input region holds A and B of
// every rotated copy and is filled on the device with OperandValue(seed, e)
// for its e-th element of the current dtype, so the value of any operand
// element follows from its offset. Outputs have a region of their own, so a
// GEMM never overwrites another copy's inputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

inline constexpr int kMaxCopies = 64;
// Every operand starts on this boundary [bytes]: cuBLASLt's preferred
// alignment, and a multiple of every element size.
inline constexpr int64_t kOperandAlignment = 256;

// Rotated operand copies for `gemm`: cold mode takes enough that together
// they are at least twice the L2 (capped at kMaxCopies), so each launch finds
// none of its operands in the L2; warm mode takes one.
int OperandCopies(const tuner::GemmShape& gemm, int64_t l2_bytes, tuner::CacheMode cache);

struct ArenaPlan {
  int64_t input_bytes = 0;   // the largest input region of the plan's GEMMs
  int64_t output_bytes = 0;  // the largest output region
  int64_t workspace_bytes = 0;
  int64_t TotalBytes() const { return input_bytes + output_bytes + workspace_bytes; }
  // True when `other` fits inside this arena.
  bool Holds(const ArenaPlan& other) const;
};

// The arena that holds every GEMM of `gemms` (one at a time).
ArenaPlan PlanArena(std::span<const tuner::GemmShape> gemms, int64_t l2_bytes,
                    tuner::CacheMode cache, int64_t workspace_bytes);

// Where one GEMM's operands lie [bytes from the arena's start].
struct OperandLayout {
  int copies = 1;
  int64_t a_bytes = 0;  // one copy of each operand, unpadded
  int64_t b_bytes = 0;
  int64_t c_bytes = 0;
  std::vector<int64_t> a_offset;  // per copy
  std::vector<int64_t> b_offset;
  std::vector<int64_t> c_offset;
  int64_t workspace_offset = 0;
};

// Lays `gemm` out in `arena`. REQUIRES: arena.Holds(PlanArena({gemm}, …)).
OperandLayout LayOut(const tuner::GemmShape& gemm, int64_t l2_bytes, tuner::CacheMode cache,
                     const ArenaPlan& arena);

// OK when `needed_bytes` fit in `free_bytes` with `headroom` (a fraction
// kept free); else ResourceExhausted saying how much is needed and free.
absl::Status CheckFits(int64_t needed_bytes, int64_t free_bytes, double headroom = 0.1);

}  // namespace crest::measure
