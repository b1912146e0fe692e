// The cuBLASLt measuring engine (built only with CREST_WITH_CUDA). Every
// figure it returns is a measurement on a device; see DESIGN.md, "How a
// measurement is made", and docs/measurement.md.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/measure/sampling.h"

namespace crest::measure {

struct ProbedDevice {
  int index = 0;
  DeviceInfo device;
  SoftwareInfo software;
  int64_t free_bytes = 0;
};

// Every CUDA device with its identity and the software versions.
// FailedPrecondition "no CUDA device …" when the driver reports none (or no
// driver is installed).
absl::StatusOr<std::vector<ProbedDevice>> ProbeDevices();

struct CublasLtOptions {
  int device = 0;                  // CUDA device index
  int top_k = 8;                   // heuristic candidates per GEMM
  bool exhaustive = false;         // walk algorithm capabilities instead
  int max_algos = 64;              // cap for exhaustive mode
  double max_search_seconds = 30;  // cap for exhaustive mode, per GEMM
  bool cold_l2 = true;             // rotate operand copies (else warm)
  int64_t workspace_bytes = 32 << 20;
  double warmup_seconds = 0.3;  // bring the GPU to its running clock first
  StoppingOptions stopping;     // per algorithm
};

// A Backend that measures on `options.device`. Fails with FailedPrecondition
// when there is no such device, before anything else happens.
absl::StatusOr<std::unique_ptr<Backend>> MakeCublasLtBackend(const CublasLtOptions& options);

}  // namespace crest::measure
