// Identity of the device and software a measurement was made on.
#pragma once

#include <cstdint>
#include <string>

namespace crest {

struct DeviceInfo {
  std::string name;       // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;       // "GPU-…"; unique per physical GPU
  std::string gpu_model;  // catalogue name, e.g. "H100-SXM"; empty if not catalogued
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int sm_clock_mhz = 0;  // maximum SM clock
  int memory_clock_mhz = 0;
  std::string host;  // the node's host name
};

struct SoftwareInfo {
  std::string driver;        // driver version, e.g. "580.159.04" or "13000" (CUDA API)
  int64_t cuda_runtime = 0;  // cudaRuntimeGetVersion(), e.g. 13000
  int64_t cublaslt = 0;      // cublasLtGetVersion(), e.g. 130100
};

}  // namespace crest
