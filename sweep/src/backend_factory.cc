#include "crest/sweep/backend_factory.h"

#include "crest/common/quoted.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/tuner/gpu_catalogue.h"
#include "replay_backend.h"

namespace crest::sweep {

absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeBackend(const BackendChoice& choice) {
  if (choice.name == "model") {
    if (choice.gpu.empty()) {
      return absl::InvalidArgumentError(
          "gpu: the model backend needs a target GPU (--gpu, or \"gpu\" in the spec)");
    }
    auto gpu = tuner::FindGpu(choice.gpu);
    if (!gpu.ok()) return gpu.status();
    return tuner::MakeModelBackend(**gpu);
  }
  if (choice.name == "replay") return internal::MakeReplayBackend(choice);
  if (choice.name != "cublaslt") {
    return absl::InvalidArgumentError(StrCat("backend: unknown backend ", Quoted(choice.name),
                                             " (expected model, cublaslt or replay)"));
  }
  measure::CublasLtOptions options;
  options.device = choice.device;
  options.measure = choice.measure;
  return measure::MakeCublasLtBackend(options);
}

}  // namespace crest::sweep
