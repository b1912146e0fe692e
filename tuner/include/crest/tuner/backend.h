// The interface every source of GEMM times implements: the analytic model
// here, the cuBLASLt measuring engine where CUDA is built in, fakes in tests.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/predictor.h"

namespace crest::tuner {

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
  // Measuring backends: how their results are measured (cache mode, clock
  // policy); part of every result's key.
  virtual MeasureMode Mode() const { return {}; }

  // Prepares for a sweep of `plan` (the GEMMs it will Run, in order): a
  // measuring backend sizes its operand arena once for all of them. Running
  // a GEMM outside the plan still works (the arena grows). Errors are values.
  virtual absl::Status Reserve(std::span<const GemmShape> plan) {
    (void)plan;
    return absl::OkStatus();
  }

  // Times one GEMM. Errors are values; InvalidArgument for a shape the
  // backend cannot run.
  virtual absl::StatusOr<GemmOutcome> Run(const GemmShape& gemm) = 0;
};

// The predictor as a backend for `gpu` (which must outlive it).
std::unique_ptr<Backend> MakeModelBackend(const GpuSpec& gpu);

}  // namespace crest::tuner
