// Internal: the one translator of CUDA runtime and cuBLAS status codes into
// absl::Status, recording file, line and the call's text.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "absl/status/status.h"

namespace crest::measure::internal {

// "cudaErrorNoDevice (no CUDA-capable device is detected)": the error's
// name and the runtime's words, for a message that is not a Status of its own.
std::string CudaErrorText(cudaError_t error);
absl::Status CudaStatus(cudaError_t error, const char* call, const char* file, int line);
absl::Status CublasStatus(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace crest::measure::internal

// Evaluates a CUDA runtime call; on failure returns its Status.
#define CREST_CUDA(call)                                                                 \
  do {                                                                                   \
    if (const cudaError_t crest_e = (call); crest_e != cudaSuccess) {                    \
      return ::crest::measure::internal::CudaStatus(crest_e, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (0)

// Evaluates a cuBLAS(Lt) call; on failure returns its Status.
#define CREST_CUBLAS(call)                                                                 \
  do {                                                                                     \
    if (const cublasStatus_t crest_s = (call); crest_s != CUBLAS_STATUS_SUCCESS) {         \
      return ::crest::measure::internal::CublasStatus(crest_s, #call, __FILE__, __LINE__); \
    }                                                                                      \
  } while (0)
