// Internal: the engine's three entry points as libcrest_cublaslt.so
// implements them; plugin_entry.cc hands them to the loader, which serves
// them as cuda_backend.h's and cuda_libraries.h's functions.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/cuda_backend.h"
#include "crest/measure/cuda_libraries.h"

namespace crest::measure::device_side {

absl::StatusOr<std::vector<ProbedDevice>> ProbeDevices();
absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeCublasLtBackend(const CublasLtOptions& options);
CudaLibraries ProbeCudaLibraries();

}  // namespace crest::measure::device_side
