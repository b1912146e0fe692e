// Internal: the GpuMonitor of crest/measure/launcher.h through NVML,
// loaded at run time (libnvidia-ml.so.1 comes with the driver), so the build
// needs no NVML headers or stub. Without NVML every reading is "unknown" and
// the engine still measures, discarding nothing.
#pragma once

#include <string>

#include "crest/measure/launcher.h"

namespace crest::measure::internal {

// The driver's version as NVML reports it ("580.159.04"); empty when NVML
// is unavailable or the call fails (the caller then falls back to the CUDA
// driver API's version number).
std::string NvmlDriverVersion();

class NvmlMonitor final : public GpuMonitor {
 public:
  // `uuid` as cudaDeviceProp::uuid formats it ("GPU-…"). NVML is opened once
  // per process, on first use.
  explicit NvmlMonitor(const std::string& uuid);

  bool available() const { return device_ != nullptr; }
  // Why NVML is unavailable, when it is.
  const std::string& why_unavailable() const { return why_; }
  // SM clock, power and clock-event reasons; a quantity NVML fails to read
  // is left unknown (0) for this reading.
  GpuReading Read() override;

 private:
  void* device_ = nullptr;
  std::string why_;
};

}  // namespace crest::measure::internal
