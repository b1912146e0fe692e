#include "crest/tuner/backend.h"

namespace crest::tuner {
namespace {

class ModelBackend final : public Backend {
 public:
  explicit ModelBackend(const GpuSpec& gpu) : gpu_(gpu) {}
  std::string_view Name() const override { return "model"; }
  bool Measures() const override { return false; }
  const GpuSpec& Gpu() const override { return gpu_; }
  absl::StatusOr<GemmOutcome> Run(const GemmShape& gemm) override {
    auto p = Predict(gemm, gpu_);
    if (!p.ok()) return p.status();
    GemmOutcome out;
    out.predicted = *std::move(p);
    return out;
  }

 private:
  const GpuSpec& gpu_;
};

}  // namespace

std::unique_ptr<Backend> MakeModelBackend(const GpuSpec& gpu) {
  return std::make_unique<ModelBackend>(gpu);
}

}  // namespace crest::tuner
