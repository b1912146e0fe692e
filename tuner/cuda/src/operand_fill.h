// Internal: device kernels of the engine (operand_fill.cu). Plain C++
// declarations with no Crest or absl types, so nvcc compiles only the kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crest::measure::internal {

// How an element is stored on the device.
enum class Storage { kFloat, kHalf, kBFloat16, kFp8E4M3 };

// Fills `elements` elements at `data` with OperandValue(seed, e,
// mantissa_bits) for e = 0 … elements-1, stored as `storage`, on `stream`.
// Returns the launch's error.
cudaError_t LaunchFillOperands(void* data, int64_t elements, Storage storage, int mantissa_bits,
                               uint64_t seed, cudaStream_t stream);

}  // namespace crest::measure::internal
