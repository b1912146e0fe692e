// The cuBLASLt measuring engine (built only with CREST_WITH_CUDA). Every
// figure it returns is a measurement on a device; docs/measurement.md says
// how it is made. The device-free parts of the method live in
// crest/measure/ and are tested without a GPU; this is the part that
// needs one.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/device_info.h"
#include "crest/measure/options.h"
#include "crest/measure/pipeline.h"

namespace crest::measure {

struct ProbedDevice {
  int index = 0;
  DeviceInfo device;
  SoftwareInfo software;
  int64_t free_bytes = 0;  // when first probed
};

// Every CUDA device with its identity and the software versions, probed once
// per process (later calls return the first answer). FailedPrecondition
// "no CUDA device …" when the driver reports none (or no driver is installed).
absl::StatusOr<std::vector<ProbedDevice>> ProbeDevices();

struct CublasLtOptions {
  int device = 0;          // CUDA device index
  MeasureOptions measure;  // the method: one type for the CLI, crestd and specs
  int64_t workspace_bytes = 32 << 20;
  double max_search_seconds = 30;  // exhaustive mode: time for checking candidates, per GEMM
  EngineTuning tuning;             // the engine's fixed knobs (boost clock filled in from the device)
};

// A Backend that measures on `options.device`. Fails with FailedPrecondition
// when there is no such device, and InvalidArgument for invalid options,
// before anything else happens.
absl::StatusOr<std::unique_ptr<Backend>> MakeCublasLtBackend(const CublasLtOptions& options);

}  // namespace crest::measure
