// Loads libcrest_cublaslt.so on first use (cuda_backend.h says where from),
// and asks the NVIDIA driver for devices before loading it, so a node
// without a GPU, or a command that only predicts, never maps cuBLASLt.
#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "crest/common/env.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/measure/cuda_libraries.h"
#include "cuda_plugin.h"

#ifndef CREST_CUBLASLT_BUILD_PATH
#define CREST_CUBLASLT_BUILD_PATH ""
#endif
#ifndef CREST_CUDA_REASON
#define CREST_CUDA_REASON "built without CUDA"
#endif

namespace crest::measure {
namespace {

namespace fs = std::filesystem;
using internal::CudaPlugin;

struct Loaded {
  const CudaPlugin* api = nullptr;
  std::string path;
  std::string error;  // why api is null
};

// The binary or shared object this code is linked into: the Python
// extension finds the engine beside itself as the CLI does.
fs::path OwnDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path self = fs::canonical(fs::path(info.dli_fname), ec);
  if (ec) self = info.dli_fname;
  return self.parent_path();
}

std::vector<fs::path> Candidates() {
  std::vector<fs::path> out;
  if (auto env = DefaultEnv().GetVar("CREST_CUBLASLT_LIBRARY"); env && !env->empty()) {
    return {fs::path(*env)};
  }
  if (const fs::path dir = OwnDirectory(); !dir.empty()) {
    out.push_back(dir / internal::kCudaPluginFile);
    out.push_back(dir / ".." / "lib" / "crest" / internal::kCudaPluginFile);
    out.push_back(dir / ".." / "lib" / internal::kCudaPluginFile);
  }
  if (std::strlen(CREST_CUBLASLT_BUILD_PATH) > 0) out.emplace_back(CREST_CUBLASLT_BUILD_PATH);
  return out;
}

absl::Status Check(const CudaPlugin* api, const std::string& path) {
  if (api == nullptr || api->abi != internal::kCudaPluginAbi ||
      api->layout != internal::CudaPluginLayout() || std::strcmp(api->compiler, __VERSION__) != 0 ||
      api->probe_devices == nullptr || api->make_backend == nullptr ||
      api->probe_libraries == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("the cuBLASLt engine ", path,
               " comes from another build of Crest; use the one built with this binary"));
  }
  return absl::OkStatus();
}

Loaded Load() {
  Loaded l;
  if (!CublasLtBackendBuilt()) {
    l.error = StrCat("the cuBLASLt backend is not built into this crest (", CREST_CUDA_REASON, ")");
    return l;
  }
  std::vector<std::string> looked;
  for (const fs::path& candidate : Candidates()) {
    std::error_code ec;
    if (!fs::exists(candidate, ec)) {
      looked.push_back(candidate.lexically_normal().string());
      continue;
    }
    l.path = candidate.lexically_normal().string();
    void* library = dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      l.error = StrCat("the cuBLASLt engine ", l.path,
                       " cannot be loaded: ", why ? why : "unknown reason",
                       " (it needs the CUDA runtime and cuBLASLt on the library path)");
      return l;
    }
    using Entry = const CudaPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(library, internal::kCudaPluginSymbol));
    const CudaPlugin* api = entry ? entry() : nullptr;
    if (auto s = Check(api, l.path); !s.ok()) {
      l.error = std::string(s.message());
      return l;
    }
    l.api = api;  // never unloaded: its code serves the backends it made
    return l;
  }
  l.error = StrCat("the cuBLASLt engine ", internal::kCudaPluginFile, " was not found (looked for ",
                   absl::StrJoin(looked, ", "), "); set CREST_CUBLASLT_LIBRARY to its path");
  return l;
}

const Loaded& Engine() {
  static const Loaded loaded = Load();
  return loaded;
}

// Asks libcuda.so.1 (the driver, not the CUDA runtime) whether there is a
// device, so that a node without one answers without loading the engine.
absl::Status DriverSeesDevices() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    return absl::FailedPreconditionError(
        "no CUDA device: no NVIDIA driver is installed (libcuda.so.1 not found)");
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Name = int (*)(int, const char**);
  auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
  auto name = reinterpret_cast<Name>(dlsym(driver, "cuGetErrorName"));
  if (init == nullptr || count == nullptr) {
    return absl::FailedPreconditionError("no CUDA device: libcuda.so.1 lacks cuInit");
  }
  int devices = 0;
  int e = init(0);
  if (e == 0) e = count(&devices);
  if (e != 0) {
    const char* text = nullptr;
    if (name == nullptr || name(e, &text) != 0 || text == nullptr) text = "unknown error";
    return absl::FailedPreconditionError(
        StrCat("no CUDA device: the driver says ", text, " (CUresult ", e, ")"));
  }
  if (devices == 0)
    return absl::FailedPreconditionError("no CUDA device: the driver reports 0 devices");
  return absl::OkStatus();  // the driver stays loaded: the engine uses it next
}

absl::StatusOr<std::vector<ProbedDevice>> Probe() {
  if (!CublasLtBackendBuilt()) {
    return absl::FailedPreconditionError(StrCat("no CUDA device: ", Engine().error));
  }
  if (auto s = DriverSeesDevices(); !s.ok()) return s;
  const Loaded& engine = Engine();
  if (engine.api == nullptr) return absl::FailedPreconditionError(engine.error);
  return engine.api->probe_devices();
}

}  // namespace

bool CublasLtBackendBuilt() { return std::strlen(CREST_CUBLASLT_BUILD_PATH) > 0; }

std::string_view CublasLtBackendReason() { return CREST_CUDA_REASON; }

absl::StatusOr<std::vector<ProbedDevice>> ProbeDevices() {
  // Once per process: devices do not change under a running process, and
  // probing initialises the CUDA context (slow).
  static const absl::StatusOr<std::vector<ProbedDevice>> probed = Probe();
  return probed;
}

absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeCublasLtBackend(
    const CublasLtOptions& options) {
  if (auto s = ValidateMeasureOptions(options.measure); !s.ok()) return s;
  if (!CublasLtBackendBuilt())
    return absl::FailedPreconditionError(StrCat("backend: ", Engine().error));
  if (auto devices = ProbeDevices(); !devices.ok()) return devices.status();
  const Loaded& engine = Engine();
  if (engine.api == nullptr) return absl::FailedPreconditionError(engine.error);
  return engine.api->make_backend(options);
}

CudaLibraries ProbeCudaLibraries() {
  const Loaded& engine = Engine();
  if (engine.api == nullptr) {
    CudaLibraries libs;
    libs.backend_path = engine.path;
    libs.load_error = engine.error;
    return libs;
  }
  CudaLibraries libs = engine.api->probe_libraries();
  libs.backend_path = engine.path;
  return libs;
}

}  // namespace crest::measure
