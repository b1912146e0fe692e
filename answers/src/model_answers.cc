// ModelAnswers: this build's analytic model answers everything, predicted.
#include <memory>

#include "crest/answers/answers.h"
#include "crest/answers/set_timers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"

namespace crest::answers {
namespace {

class ModelAnswersImpl final : public Answers {
 public:
  ModelAnswersImpl() { origin_.description = "this build's model"; }

  const AnswerOrigin& origin() const override { return origin_; }

  absl::StatusOr<DffRanking> Dff(const DffQuery& query, const GpuSpec& gpu) override {
    return RankDffWith(query, gpu, TimersFor(gpu));
  }
  absl::StatusOr<VocabRanking> Vocab(const VocabQuery& query, const GpuSpec& gpu) override {
    return RankVocabWith(query, TimersFor(gpu));
  }
  absl::StatusOr<std::vector<DesignRow>> Design(std::span<const DesignConfig> configs,
                                                const DesignOptions& options,
                                                const GpuSpec& gpu) override {
    return RankDesignsWith(configs, options, gpu, TimersFor(gpu));
  }
  absl::StatusOr<GemmAnswer> Lookup(const GemmShape& gemm, const GpuSpec& gpu) override {
    if (auto s = ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
    GemmAnswer answer;
    auto p = crest::Predict(gemm, gpu);
    if (p.ok()) answer.predicted = PredictionRowOf(gemm, gpu, *p);
    return answer;
  }
  absl::StatusOr<Prediction> Predict(const GemmShape& gemm, const GpuSpec& gpu) override {
    return crest::Predict(gemm, gpu);
  }

 private:
  static SetTimers TimersFor(const GpuSpec& gpu) {
    SetTimers t;
    // A GEMM the model has no path for is NotFound: the candidate is missing.
    t.time = EachGemm([timer = PredictorTimer(gpu)](const GemmShape& g) -> absl::StatusOr<Timing> {
      auto p = timer(g);
      if (!p.ok()) return absl::NotFoundError(p.status().message());
      return p;
    });
    return t;
  }

  AnswerOrigin origin_;
};

}  // namespace

std::unique_ptr<Answers> ModelAnswers() { return std::make_unique<ModelAnswersImpl>(); }

}  // namespace crest::answers
