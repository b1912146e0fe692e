// Identity of the device and software a measurement was made on, and of the
// run it belongs to: whether two runs are one, and how answers name one.
#pragma once

#include <cstdint>
#include <string>

namespace crest::tuner {

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
  // Not a GPU: the replay backend's simulated one, timing a recorded table
  // (the file, its hash, the noise, seed and drift). Empty for a real GPU.
  std::string replay;
};

struct SoftwareInfo {
  std::string driver;        // driver version, e.g. "580.159.04" or "13000" (CUDA API)
  int64_t cuda_runtime = 0;  // cudaRuntimeGetVersion(), e.g. 13000
  int64_t cublaslt = 0;      // cublasLtGetVersion(), e.g. 130100
};

// The run a measured figure comes from: one sweep job, as the database that
// answered knows it. Figures of different runs were measured minutes or days
// apart, in different GPU states; an answer says which run each comes from.
struct RunInfo {
  int64_t job_id = 0;       // in the answering database; 0: measured outside any job
  std::string job_uid;      // the job's globally unique id (survives merges); empty for job 0
  std::string name;         // the sweep spec's name; may be empty
  int64_t started_us = 0;   // when the job was created [µs since the epoch]; 0 unknown
  std::string device_uuid;  // the GPU it ran on
  std::string host;         // the node the GPU is in
};

// Whether two runs are one: the same job (id and uid) on the same device.
bool SameRun(const RunInfo& a, const RunInfo& b);
// "job 3 'dff-h4096' (2026-11-23 09:27 UTC)": how answers name a run.
std::string DescribeRun(const RunInfo& run);

}  // namespace crest::tuner
