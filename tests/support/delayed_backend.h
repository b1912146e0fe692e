// Test support: the model backend slowed to a measuring backend's pace, so
// that cancellation, priorities and crash recovery can be exercised without
// a GPU. Results are unchanged.
#pragma once

#include <memory>

#include "crest/tuner/backend.h"
#include "server.h"

namespace crest::testing {

class DelayedBackend final : public tuner::Backend {
 public:
  DelayedBackend(std::unique_ptr<tuner::Backend> inner, double delay_ms);
  std::string_view Name() const override { return inner_->Name(); }
  bool Measures() const override { return inner_->Measures(); }
  const tuner::GpuSpec& Gpu() const override { return inner_->Gpu(); }
  absl::StatusOr<tuner::GemmOutcome> Run(const tuner::GemmShape& gemm) override;

 private:
  std::unique_ptr<tuner::Backend> inner_;
  double delay_ms_;
};

// crestd's default backends, with every model-lane GEMM delayed `delay_ms`
// (none when delay_ms <= 0).
service::BackendMaker DelayedModelBackends(double delay_ms);

}  // namespace crest::testing
