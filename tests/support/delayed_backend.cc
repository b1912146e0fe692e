#include "delayed_backend.h"

#include <chrono>
#include <thread>

#include "crest/sweep/backend_factory.h"

namespace crest::testing {

DelayedBackend::DelayedBackend(std::unique_ptr<tuner::Backend> inner, double delay_ms)
    : inner_(std::move(inner)), delay_ms_(delay_ms) {}

absl::StatusOr<tuner::GemmOutcome> DelayedBackend::Run(const tuner::GemmShape& gemm) {
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_ms_ * 1000)));
  return inner_->Run(gemm);
}

service::BackendMaker DelayedModelBackends(double delay_ms) {
  return
      [delay_ms](const service::Lane& lane,
                 const sweep::SweepSpec& spec) -> absl::StatusOr<std::unique_ptr<tuner::Backend>> {
        auto backend = sweep::MakeBackend({lane.backend, spec.gpu, lane.device, spec.measure, {}});
        if (!backend.ok() || lane.backend != "model" || delay_ms <= 0) return backend;
        return std::make_unique<DelayedBackend>(*std::move(backend), delay_ms);
      };
}

}  // namespace crest::testing
