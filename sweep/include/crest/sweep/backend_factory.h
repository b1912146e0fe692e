// The one place where sweep backends are made, for `crest sweep` and crestd
// alike, so that the same spec runs the same way wherever it runs.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/backend.h"
#include "crest/measure/options.h"

namespace crest::sweep {

struct BackendChoice {
  std::string name;                 // "model" or "cublaslt"
  std::string gpu;                  // model: the catalogued GPU it predicts for
  int device = 0;                   // cublaslt: the CUDA device index
  measure::MeasureOptions measure;  // cublaslt: the method (a spec's "measure")
};

// InvalidArgument for an unknown backend, a missing or unknown GPU (model)
// or invalid measure options; FailedPrecondition when the cuBLASLt backend
// is not built into this binary or the device is missing.
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice);

// Whether this build has the cuBLASLt backend, and in words why (not).
bool MeasuringBackendBuilt();
std::string_view MeasuringBackendReason();

}  // namespace crest::sweep
