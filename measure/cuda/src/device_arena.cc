#include "device_arena.h"

#include <algorithm>

#include "crest/measure/verification.h"
#include "cuda_status.h"
#include "device_kernels.h"

namespace crest::measure::internal {
namespace {

Storage StorageOf(tuner::DType dtype) {
  switch (dtype) {
    case tuner::DType::kFp16:
      return Storage::kHalf;
    case tuner::DType::kBf16:
      return Storage::kBFloat16;
    case tuner::DType::kFp8E4M3:
      return Storage::kFp8E4M3;
    case tuner::DType::kFp32:
    case tuner::DType::kTf32:
      return Storage::kFloat;
  }
  return Storage::kFloat;
}

}  // namespace

DeviceArena::~DeviceArena() {
  if (base_ != nullptr) cudaFree(base_);
}

absl::Status DeviceArena::Hold(const ArenaPlan& wanted) {
  if (base_ != nullptr && plan_.Holds(wanted)) return absl::OkStatus();
  ArenaPlan grown = wanted;
  if (base_ != nullptr) {  // grow to hold both, so alternating shapes do not reallocate
    grown.input_bytes = std::max(grown.input_bytes, plan_.input_bytes);
    grown.output_bytes = std::max(grown.output_bytes, plan_.output_bytes);
    grown.workspace_bytes = std::max(grown.workspace_bytes, plan_.workspace_bytes);
    CREST_CUDA(cudaFree(base_));
    base_ = nullptr;
    filled_.reset();
  }
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  CREST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (auto s = CheckFits(grown.TotalBytes(), static_cast<int64_t>(free_bytes)); !s.ok()) return s;
  CREST_CUDA(cudaMalloc(&base_, static_cast<size_t>(grown.TotalBytes())));
  plan_ = grown;
  return absl::OkStatus();
}

absl::Status DeviceArena::Fill(tuner::DType dtype, cudaStream_t stream) {
  if (filled_ == dtype) return absl::OkStatus();
  const int64_t elements = plan_.input_bytes / tuner::ElementBytes(dtype);
  if (elements > 0) {
    const cudaError_t e =
        LaunchFillOperands(base_, elements, StorageOf(dtype), MantissaBits(dtype), seed_, stream);
    if (e != cudaSuccess) return CudaStatus(e, "LaunchFillOperands", __FILE__, __LINE__);
  }
  filled_ = dtype;
  return absl::OkStatus();
}

}  // namespace crest::measure::internal
