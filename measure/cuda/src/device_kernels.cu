// The engine's device code: the operand generator (the same OperandValue
// the host verifies with, crest/measure/operand_values.h, stored
// exactly in the GEMM's input dtype) and the kernel that holds a stream
// until the host has queued a round of samples.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "crest/measure/operand_values.h"
#include "device_kernels.h"

namespace crest::measure::internal {
namespace {

template <typename T>
__device__ T Store(float v);
template <>
__device__ float Store<float>(float v) {
  return v;
}
template <>
__device__ __half Store<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 Store<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 Store<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <typename T>
__global__ void Fill(T* data, int64_t elements, uint64_t seed, int mantissa_bits) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements;
       e += stride) {
    data[e] = Store<T>(OperandValue(seed, static_cast<uint64_t>(e), mantissa_bits));
  }
}

template <typename T>
cudaError_t Launch(void* data, int64_t elements, uint64_t seed, int bits, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t wanted = (elements + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
  Fill<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(data), elements, seed, bits);
  return cudaGetLastError();
}

__device__ int64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return static_cast<int64_t>(ns);
}

__global__ void WaitForHost(const volatile int* flag, int64_t timeout_ns) {
  const int64_t start = GlobalTimerNs();
  while (*flag == 0 && GlobalTimerNs() - start < timeout_ns) {
  }
}

}  // namespace

cudaError_t LaunchWaitForHost(const volatile int* flag, int64_t timeout_ns, cudaStream_t stream) {
  WaitForHost<<<1, 1, 0, stream>>>(flag, timeout_ns);
  return cudaGetLastError();
}

cudaError_t LaunchFillOperands(void* data, int64_t elements, Storage storage, int mantissa_bits,
                               uint64_t seed, cudaStream_t stream) {
  switch (storage) {
    case Storage::kFloat:
      return Launch<float>(data, elements, seed, mantissa_bits, stream);
    case Storage::kHalf:
      return Launch<__half>(data, elements, seed, mantissa_bits, stream);
    case Storage::kBFloat16:
      return Launch<__nv_bfloat16>(data, elements, seed, mantissa_bits, stream);
    case Storage::kFp8E4M3:
      return Launch<__nv_fp8_e4m3>(data, elements, seed, mantissa_bits, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace crest::measure::internal
