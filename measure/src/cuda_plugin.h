// Internal: what libcrest_cublaslt.so hands the process that loads it
// (measure/src/cuda_loader.cc). The library is built from the same sources
// by the same compiler as the binary, so C++ types cross; the fingerprint
// refuses a library from another build. Nothing here throws: the library's
// functions catch and return a Status.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/cuda_backend.h"
#include "crest/measure/cuda_libraries.h"

namespace crest::measure::internal {

struct CudaPlugin {
  int abi = 0;                // kCudaPluginAbi
  const char* compiler = "";  // __VERSION__ of the compiler that built it
  size_t layout = 0;          // CudaPluginLayout() where it was built
  absl::StatusOr<std::vector<ProbedDevice>> (*probe_devices)() = nullptr;
  absl::StatusOr<std::unique_ptr<tuner::Backend>> (*make_backend)(const CublasLtOptions&) = nullptr;
  CudaLibraries (*probe_libraries)() = nullptr;
};

inline constexpr int kCudaPluginAbi = 1;
inline constexpr const char* kCudaPluginSymbol = "crest_cublaslt_plugin";
inline constexpr const char* kCudaPluginFile = "libcrest_cublaslt.so";

// The sizes of what crosses, folded: a changed type changes it.
constexpr size_t CudaPluginLayout() {
  return sizeof(CudaPlugin) * 1'000'003 + sizeof(ProbedDevice) * 10'007 +
         sizeof(CublasLtOptions) * 101 + sizeof(CudaLibraries);
}

}  // namespace crest::measure::internal

// The library's one exported symbol.
extern "C" const crest::measure::internal::CudaPlugin* crest_cublaslt_plugin();
