// Internal: the SM clock of a device through NVML, loaded at run time
// (libnvidia-ml.so.1 comes with the driver), so the build needs no NVML
// headers or stub. Without NVML the clock reads 0 ("unknown").
#pragma once

#include <string>

namespace crest::measure::internal {

class NvmlClock final {
 public:
  // `uuid` as cudaDeviceProp::uuid formats it ("GPU-…").
  explicit NvmlClock(const std::string& uuid);
  ~NvmlClock();
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  bool available() const { return device_ != nullptr; }
  // Current SM clock [MHz]; 0 when unavailable.
  double SmClockMhz() const;

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  int (*get_clock_)(void*, int, unsigned*) = nullptr;
  int (*shutdown_)() = nullptr;
};

}  // namespace crest::measure::internal
