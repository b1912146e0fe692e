// ModelAnswers: this build's analytic model answers everything, predicted.
#include <memory>

#include "crest/answers/answers.h"
#include "crest/answers/set_timers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "model_timers.h"

namespace crest::answers {
namespace {

class ModelAnswersImpl final : public Answers {
 public:
  ModelAnswersImpl() { origin_.description = "this build's model"; }

  const AnswerOrigin& origin() const override { return origin_; }

  absl::StatusOr<tuner::DffRanking> Dff(const tuner::DffQuery& query,
                                        const tuner::GpuSpec& gpu) override {
    return RankDffWith(query, gpu, TimersFor(gpu));
  }
  absl::StatusOr<tuner::VocabRanking> Vocab(const tuner::VocabQuery& query,
                                            const tuner::GpuSpec& gpu) override {
    return RankVocabWith(query, TimersFor(gpu));
  }
  absl::StatusOr<std::vector<tuner::DesignRow>> Design(std::span<const tuner::DesignConfig> configs,
                                                       const tuner::DesignOptions& options,
                                                       const tuner::GpuSpec& gpu) override {
    return RankDesignsWith(configs, options, gpu, TimersFor(gpu));
  }
  absl::StatusOr<GemmAnswer> Lookup(const tuner::GemmShape& gemm,
                                    const tuner::GpuSpec& gpu) override {
    if (auto s = tuner::ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
    GemmAnswer answer;
    auto p = crest::tuner::Predict(gemm, gpu);
    if (p.ok()) answer.predicted = PredictionRowOf(gemm, gpu, *p);
    return answer;
  }
  absl::StatusOr<tuner::Prediction> Predict(const tuner::GemmShape& gemm,
                                            const tuner::GpuSpec& gpu) override {
    return crest::tuner::Predict(gemm, gpu);
  }

 private:
  static SetTimers TimersFor(const tuner::GpuSpec& gpu) { return internal::ModelTimers(gpu); }

  AnswerOrigin origin_;
};

}  // namespace

std::unique_ptr<Answers> ModelAnswers() { return std::make_unique<ModelAnswersImpl>(); }

}  // namespace crest::answers
