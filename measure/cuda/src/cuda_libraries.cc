#include "crest/measure/cuda_libraries.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <link.h>

#include <cstring>

#include "crest/common/str_cat.h"
#include "cuda_status.h"
#include "device_side.h"

namespace crest::measure {
namespace {

int AddLibrary(dl_phdr_info* info, size_t, void* data) {
  auto* libs = static_cast<CudaLibraries*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || *name == '\0') return 0;
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  if (std::strncmp(base, "libcudart.so", 12) == 0) libs->cudart_path = name;
  if (std::strncmp(base, "libcublasLt.so", 14) == 0) libs->cublaslt_path = name;
  return 0;
}

}  // namespace

CudaLibraries device_side::ProbeCudaLibraries() {
  CudaLibraries libs;
  dl_iterate_phdr(AddLibrary, &libs);
  cudaRuntimeGetVersion(&libs.runtime_version);
  libs.cublaslt_version = static_cast<int>(cublasLtGetVersion());
  const cudaError_t e = cudaDriverGetVersion(&libs.driver_version);
  if (e != cudaSuccess) {
    libs.driver_version = 0;
    libs.driver_error = internal::CudaErrorText(e);
  } else if (libs.driver_version == 0) {
    libs.driver_error = "no NVIDIA driver is loaded (libcuda.so.1 not found)";
  }
  return libs;
}

}  // namespace crest::measure
