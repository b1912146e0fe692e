// The one symbol libcrest_cublaslt.so exports: its entry points, wrapped so
// that no exception leaves the library.
#include <exception>

#include "crest/common/str_cat.h"
#include "cuda_plugin.h"
#include "device_side.h"

namespace crest::measure {
namespace {

absl::Status Escaped(const char* what) {
  return absl::InternalError(StrCat("the cuBLASLt engine failed: ", what));
}

// `F(args…)`, an exception turned into an error value.
template <auto F, typename... Args>
auto Caught(Args... args) -> decltype(F(args...)) {
  try {
    return F(args...);
  } catch (const std::exception& e) {
    return Escaped(e.what());
  } catch (...) {
    return Escaped("unknown exception");
  }
}

CudaLibraries ProbeLibrariesCaught() {
  try {
    return device_side::ProbeCudaLibraries();
  } catch (...) {
    CudaLibraries libs;
    libs.load_error = "the cuBLASLt engine failed probing the CUDA libraries";
    return libs;
  }
}

constexpr internal::CudaPlugin kPlugin{
    internal::kCudaPluginAbi,
    __VERSION__,
    internal::CudaPluginLayout(),
    &Caught<&device_side::ProbeDevices>,
    &Caught<&device_side::MakeCublasLtBackend, const CublasLtOptions&>,
    &ProbeLibrariesCaught};

}  // namespace
}  // namespace crest::measure

extern "C" __attribute__((visibility("default"))) const crest::measure::internal::CudaPlugin*
crest_cublaslt_plugin() {
  return &crest::measure::kPlugin;
}
