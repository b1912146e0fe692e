#include "crest/sweep/backend_factory.h"

#include "crest/common/quoted.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/gpu_catalogue.h"
#include "replay_backend.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace crest::sweep {

bool MeasuringBackendBuilt() {
#ifdef CREST_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string_view MeasuringBackendReason() { return CREST_CUDA_REASON; }

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendChoice& choice) {
  if (choice.name == "model") {
    if (choice.gpu.empty()) {
      return absl::InvalidArgumentError(
          "gpu: the model backend needs a target GPU (--gpu, or \"gpu\" in the spec)");
    }
    auto gpu = FindGpu(choice.gpu);
    if (!gpu.ok()) return gpu.status();
    return MakeModelBackend(**gpu);
  }
  if (choice.name == "replay") return internal::MakeReplayBackend(choice);
  if (choice.name != "cublaslt") {
    return absl::InvalidArgumentError(StrCat("backend: unknown backend ", Quoted(choice.name),
                                             " (expected model, cublaslt or replay)"));
  }
  if (auto s = measure::ValidateMeasureOptions(choice.measure); !s.ok()) return s;
#ifdef CREST_HAVE_CUDA
  measure::CublasLtOptions options;
  options.device = choice.device;
  options.measure = choice.measure;
  return measure::MakeCublasLtBackend(options);
#else
  return absl::FailedPreconditionError(StrCat(
      "backend: the cuBLASLt backend is not built into this crest (", CREST_CUDA_REASON, ")"));
#endif
}

}  // namespace crest::sweep
