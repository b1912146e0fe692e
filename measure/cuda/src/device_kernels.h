// Internal: the engine's device code (device_kernels.cu). Plain C++
// declarations with no Crest or absl types, so nvcc compiles only kernels.
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

// Holds `stream` until the host sets *flag to nonzero (or `timeout_ns` pass):
// the work queued behind it then starts back to back, with no gap for the
// host's queuing in the first timed sample. `flag` is mapped host memory,
// seen through its device pointer. Returns the launch's error.
cudaError_t LaunchWaitForHost(const volatile int* flag, int64_t timeout_ns, cudaStream_t stream);

}  // namespace crest::measure::internal
