// The values of a GEMM's operands, as a pure function of (seed, index): the
// device fills its operand arena with them (measure/cuda/src/device_kernels.cu)
// and verification recomputes the sampled rows and columns on the host from
// the same function, so no host copy of an operand ever exists. This header
// is compiled by both the host compiler and nvcc.
//
// A value is ±(1 + m/2^b)·2^e with a random sign, e ∈ {-2, -1} and b random
// mantissa bits, b being the mantissa width of the dtype: never zero (zeros
// run faster than data), every mantissa bit toggling like real data, and
// exactly representable in the dtype, so the device stores it without
// rounding and the host knows it exactly.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define CREST_HOST_DEVICE __host__ __device__
#else
#define CREST_HOST_DEVICE
#endif

namespace crest::measure {

// SplitMix64's finaliser: a bijective mix of 64 bits.
CREST_HOST_DEVICE inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The operand value at `index` for `seed`, with `mantissa_bits` random
// mantissa bits (bf16 7, fp16 10, tf32 10, fp32 23, fp8 e4m3 3), built
// directly as the bits of an IEEE float, branch-free: the same bits on
// every platform.
CREST_HOST_DEVICE inline float OperandValue(uint64_t seed, uint64_t index, int mantissa_bits) {
  // SplitMix64: the index-th output of the sequence that starts at `seed`.
  const uint64_t bits = MixBits(seed + (index + 1) * 0x9e3779b97f4a7c15ULL);
  const auto sign = static_cast<uint32_t>(bits >> 63) << 31;
  // Biased exponent 125 or 126: a magnitude in [0.25, 0.5) or [0.5, 1).
  const auto exponent = (125u + static_cast<uint32_t>((bits >> 62) & 1)) << 23;
  const auto mantissa = static_cast<uint32_t>(bits & ((uint64_t{1} << mantissa_bits) - 1))
                        << (23 - mantissa_bits);
  const uint32_t raw = sign | exponent | mantissa;
  float value;
  memcpy(&value, &raw, sizeof value);
  return value;
}

}  // namespace crest::measure
