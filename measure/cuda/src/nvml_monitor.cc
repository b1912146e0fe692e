#include "nvml_monitor.h"

#include <dlfcn.h>

namespace crest::measure::internal {
namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

// The NVML entry points the engine uses, resolved once per process.
struct Nvml {
  bool ok = false;
  std::string error;
  int (*by_uuid)(const char*, void**) = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*power_mw)(void*, unsigned*) = nullptr;
  int (*reasons)(void*, unsigned long long*) = nullptr;  // NOLINT(runtime/int): NVML's type
  int (*driver_version)(char*, unsigned) = nullptr;
};

template <typename F>
F Symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

Nvml Open() {
  Nvml n;
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    n.error = "libnvidia-ml.so.1 not found (it comes with the NVIDIA driver)";
    return n;
  }
  auto init = Symbol<int (*)()>(library, "nvmlInit_v2");
  n.by_uuid = Symbol<int (*)(const char*, void**)>(library, "nvmlDeviceGetHandleByUUID");
  n.clock = Symbol<int (*)(void*, int, unsigned*)>(library, "nvmlDeviceGetClockInfo");
  n.power_mw = Symbol<int (*)(void*, unsigned*)>(library, "nvmlDeviceGetPowerUsage");
  using Reasons = int (*)(void*, unsigned long long*);  // NOLINT(runtime/int)
  n.reasons = Symbol<Reasons>(library, "nvmlDeviceGetCurrentClocksEventReasons");
  n.driver_version = Symbol<int (*)(char*, unsigned)>(library, "nvmlSystemGetDriverVersion");
  if (n.reasons == nullptr) {  // drivers before r535 name it "throttle reasons"
    n.reasons = Symbol<Reasons>(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  if (init == nullptr || n.by_uuid == nullptr || n.clock == nullptr) {
    n.error =
        "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByUUID or "
        "nvmlDeviceGetClockInfo";
    return n;
  }
  if (const int e = init(); e != kNvmlSuccess) {
    n.error = "nvmlInit_v2 failed with NVML error " + std::to_string(e);
    return n;
  }
  n.ok = true;  // the library stays loaded and initialised for the process
  return n;
}

const Nvml& Library() {
  static const Nvml nvml = Open();
  return nvml;
}

}  // namespace

std::string NvmlDriverVersion() {
  const Nvml& nvml = Library();
  if (!nvml.ok || nvml.driver_version == nullptr) return "";
  char version[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (nvml.driver_version(version, sizeof version) != kNvmlSuccess) return "";
  return version;
}

NvmlMonitor::NvmlMonitor(const std::string& uuid) {
  const Nvml& nvml = Library();
  if (!nvml.ok) {
    why_ = nvml.error;
    return;
  }
  void* device = nullptr;
  if (const int e = nvml.by_uuid(uuid.c_str(), &device); e != kNvmlSuccess) {
    why_ = "NVML does not know device " + uuid + " (NVML error " + std::to_string(e) + ")";
    return;
  }
  device_ = device;
}

GpuReading NvmlMonitor::Read() {
  GpuReading r;
  if (device_ == nullptr) return r;
  const Nvml& nvml = Library();
  unsigned mhz = 0;
  if (nvml.clock(device_, kNvmlClockSm, &mhz) == kNvmlSuccess) r.sm_clock_mhz = mhz;
  unsigned mw = 0;
  if (nvml.power_mw != nullptr && nvml.power_mw(device_, &mw) == kNvmlSuccess) {
    r.power_w = mw / 1000.0;
  }
  unsigned long long reasons = 0;  // NOLINT(runtime/int)
  if (nvml.reasons != nullptr && nvml.reasons(device_, &reasons) == kNvmlSuccess) {
    r.reasons = reasons;
    r.reasons_known = true;
  }
  return r;
}

}  // namespace crest::measure::internal
