// The interface every source of GEMM times implements: the analytic model
// here, the cuBLASLt measuring engine where CUDA is built in, fakes in tests.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/predictor.h"

namespace crest {

// Exactly one of the two is set, by the backend's kind.
struct GemmOutcome {
  std::optional<Prediction> predicted;
  std::optional<MeasuredGemm> measured;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view Name() const = 0;  // "model", "cublaslt", …
  // True when results are measurements on a device (then Device() and
  // Software() say which); false for predictions.
  virtual bool Measures() const = 0;
  // The catalogue GPU that results belong to (predicted: the target GPU;
  // measured: the device's model).
  virtual const GpuSpec& Gpu() const = 0;
  virtual DeviceInfo Device() const { return {}; }
  virtual SoftwareInfo Software() const { return {}; }

  // Times one GEMM. Errors are values; InvalidArgument for a shape the
  // backend cannot run.
  virtual absl::StatusOr<GemmOutcome> Run(const GemmShape& gemm) = 0;
};

// The predictor as a backend for `gpu` (which must outlive it).
std::unique_ptr<Backend> MakeModelBackend(const GpuSpec& gpu);

}  // namespace crest
