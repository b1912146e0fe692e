#include "nvml_clock.h"

#include <dlfcn.h>

namespace crest::measure::internal {
namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
}  // namespace

NvmlClock::NvmlClock(const std::string& uuid) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlInit_v2"));
  auto by_uuid =
      reinterpret_cast<int (*)(const char*, void**)>(dlsym(library_, "nvmlDeviceGetHandleByUUID"));
  get_clock_ =
      reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(library_, "nvmlDeviceGetClockInfo"));
  shutdown_ = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlShutdown"));
  if (init == nullptr || by_uuid == nullptr || get_clock_ == nullptr || init() != kNvmlSuccess) {
    return;
  }
  void* device = nullptr;
  if (by_uuid(uuid.c_str(), &device) == kNvmlSuccess) device_ = device;
}

NvmlClock::~NvmlClock() {
  if (device_ != nullptr && shutdown_ != nullptr) shutdown_();
  if (library_ != nullptr) dlclose(library_);
}

double NvmlClock::SmClockMhz() const {
  unsigned mhz = 0;
  if (device_ == nullptr || get_clock_(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return 0;
  return mhz;
}

}  // namespace crest::measure::internal
