#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>

#include "crest/common/env.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/tuner/gpu_catalogue.h"
#include "cuda_status.h"
#include "device_side.h"
#include "nvml_monitor.h"

namespace crest::measure {
namespace {

std::string FormatUuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

absl::StatusOr<std::vector<ProbedDevice>> Probe() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    return absl::FailedPreconditionError(
        StrCat("no CUDA device: ", e == cudaSuccess ? std::string("the driver reports 0 devices")
                                                    : internal::CudaErrorText(e)));
  }
  int driver = 0;
  int runtime = 0;
  CREST_CUDA(cudaDriverGetVersion(&driver));
  CREST_CUDA(cudaRuntimeGetVersion(&runtime));
  const std::string driver_version = internal::NvmlDriverVersion();
  std::vector<ProbedDevice> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    CREST_CUDA(cudaGetDeviceProperties(&p, i));
    ProbedDevice d;
    d.index = i;
    d.device.name = p.name;
    d.device.uuid = FormatUuid(p.uuid);
    d.device.sm_count = p.multiProcessorCount;
    d.device.cc_major = p.major;
    d.device.cc_minor = p.minor;
    d.device.l2_bytes = p.l2CacheSize;
    d.device.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    int clock_khz = 0;
    int memory_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, i);
    cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, i);
    d.device.sm_clock_mhz = clock_khz / 1000;
    d.device.memory_clock_mhz = memory_khz / 1000;
    d.device.host = DefaultEnv().HostName();
    if (auto gpu = tuner::FindGpu(p.name); gpu.ok()) d.device.gpu_model = std::string((*gpu)->name);
    // The driver's own version (NVML) names it; the CUDA driver API's number
    // only says which CUDA it supports, and is the fallback.
    d.software.driver =
        driver_version.empty() ? StrCat("CUDA driver API ", driver) : driver_version;
    d.software.cuda_runtime = runtime;
    d.software.cublaslt = static_cast<int64_t>(cublasLtGetVersion());
    size_t free_bytes = 0;
    size_t total = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) {
      d.free_bytes = static_cast<int64_t>(free_bytes);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ProbedDevice>> device_side::ProbeDevices() {
  // Once per process: device identity and software do not change under a
  // running process, and probing initialises the CUDA context (slow).
  static const absl::StatusOr<std::vector<ProbedDevice>> probed = Probe();
  return probed;
}

}  // namespace crest::measure
