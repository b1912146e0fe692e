// The cuBLASLt measuring engine. Every figure it returns is a measurement on a
// device; docs/measurement.md says how it is made. The device-free parts of
// the method live in crest/measure/ and are tested without a GPU.
//
// The engine itself is a separate library, libcrest_cublaslt.so (built only
// with CREST_WITH_CUDA), which links the CUDA runtime and cuBLASLt. A process
// loads it (dlopen) only when it first calls one of the functions below, so
// predicting and database commands never load cuBLASLt. Where it is looked
// for: $CREST_CUBLASLT_LIBRARY; beside the binary (or the Python extension)
// and in its ../lib/crest and ../lib; the build tree. When it cannot be
// found or loaded, the functions say so (FailedPrecondition, naming the file
// and the loader's reason).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/options.h"
#include "crest/measure/pipeline.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/device_info.h"

namespace crest::measure {

// Whether this build has the engine, and why not (the CMake configure's
// reason, e.g. "CUDA toolkit with cuBLASLt not found").
bool CublasLtBackendBuilt();
std::string_view CublasLtBackendReason();

struct ProbedDevice {
  int index = 0;
  tuner::DeviceInfo device;
  tuner::SoftwareInfo software;
  int64_t free_bytes = 0;  // when first probed
};

// Every CUDA device with its identity and the software versions, probed once
// per process (later calls return the first answer). FailedPrecondition
// "no CUDA device …" when the driver reports none or no driver is installed:
// that is asked of the driver (libcuda.so.1) first, so a node without a GPU
// never loads the engine; FailedPrecondition too when the engine is not built
// or cannot be loaded.
absl::StatusOr<std::vector<ProbedDevice>> ProbeDevices();

struct CublasLtOptions {
  int device = 0;          // CUDA device index
  MeasureOptions measure;  // the method: one type for the CLI, crestd and specs
  int64_t workspace_bytes = 32 << 20;
  double max_search_seconds = 30;  // exhaustive mode: time for checking candidates, per GEMM
  EngineTuning tuning;  // the engine's fixed knobs (boost clock filled in from the device)
};

// A Backend that measures on `options.device`. Fails with FailedPrecondition
// when there is no such device or no engine, and InvalidArgument for invalid
// options, before anything else happens.
absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeCublasLtBackend(const CublasLtOptions& options);

}  // namespace crest::measure
