#include "cuda_status.h"

#include "crest/common/str_cat.h"

namespace crest::measure::internal {

std::string CudaErrorText(cudaError_t error) {
  return StrCat(cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

absl::Status CudaStatus(cudaError_t error, const char* call, const char* file, int line) {
  std::string message =
      StrCat("CUDA: ", CudaErrorText(error), " in ", call, " at ", file, ":", line);
  switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return absl::FailedPreconditionError(StrCat("no CUDA device: ", message));
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CublasStatus(cublasStatus_t status, const char* call, const char* file, int line) {
  std::string message =
      StrCat("cuBLASLt: status ", static_cast<int>(status), " in ", call, " at ", file, ":", line);
  switch (status) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::InvalidArgumentError(message);
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace crest::measure::internal
