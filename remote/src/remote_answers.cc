#include "crest/remote/remote_answers.h"

#include <map>

#include "crest/answers/set_timers.h"
#include "crest/common/str_cat.h"
#include "crest/wire/convert.h"

namespace crest::remote {
namespace {

class DaemonAnswers final : public answers::Answers {
 public:
  DaemonAnswers(DaemonChannel channel, answers::AnswerOptions options)
      : channel_(std::move(channel)),
        origin_{StrCat("crestd at ", channel_.server()), options, true} {}

  const answers::AnswerOrigin& origin() const override { return origin_; }

  absl::StatusOr<tuner::DffRanking> Dff(const tuner::DffQuery& query,
                                        const tuner::GpuSpec& gpu) override {
    // The response counts candidates; the list is made here.
    auto candidates = tuner::GenerateDffCandidates(query.dff);
    if (!candidates.ok()) return candidates.status();
    v1::QueryDffRequest request;
    wire::Fill(query, std::string(gpu.name), &request);
    wire::Fill(origin_.options, request.mutable_pin(), request.mutable_mode(),
               request.mutable_runs(), request.mutable_algo());
    request.set_predict_only(origin_.options.predict_only);
    v1::QueryDffResponse response;
    if (auto s = CallUnary(channel_, &v1::Crest::Stub::QueryDff, request, &response); !s.ok()) {
      return s;
    }
    return wire::RankingOf(response, *std::move(candidates));
  }

  absl::StatusOr<tuner::VocabRanking> Vocab(const tuner::VocabQuery& query,
                                            const tuner::GpuSpec& gpu) override {
    return answers::RankVocabWith(query, TimersFor(gpu));
  }

  absl::StatusOr<std::vector<tuner::DesignRow>> Design(std::span<const tuner::DesignConfig> configs,
                                                       const tuner::DesignOptions& options,
                                                       const tuner::GpuSpec& gpu) override {
    return answers::RankDesignsWith(configs, options, gpu, TimersFor(gpu));
  }

  absl::StatusOr<answers::GemmAnswer> Lookup(const tuner::GemmShape& gemm,
                                             const tuner::GpuSpec& gpu) override {
    v1::LookupGemmRequest request;
    wire::Fill(gemm, request.mutable_gemm());
    request.set_gpu(std::string(gpu.name));
    wire::Fill(origin_.options, request.mutable_pin(), request.mutable_mode(),
               request.mutable_runs(), request.mutable_algo());
    v1::LookupGemmResponse response;
    if (auto s = CallUnary(channel_, &v1::Crest::Stub::LookupGemm, request, &response); !s.ok()) {
      return s;
    }
    return wire::AnswerOf(response, gemm, std::string(gpu.name));
  }

  absl::StatusOr<tuner::Prediction> Predict(const tuner::GemmShape& gemm,
                                            const tuner::GpuSpec& gpu) override {
    // The local prediction keeps what the response does not carry (the
    // operands' alignment); the daemon's figures replace the rest.
    auto local = crest::tuner::Predict(gemm, gpu);
    if (!local.ok()) return local.status();
    v1::PredictRequest request;
    wire::Fill(gemm, request.mutable_gemm());
    request.set_gpu(std::string(gpu.name));
    v1::PredictResponse response;
    if (auto s = CallUnary(channel_, &v1::Crest::Stub::Predict, request, &response); !s.ok()) {
      return s;
    }
    return wire::PredictionOf(response, *std::move(local));
  }

 private:
  // Each set asked once per answer.
  absl::StatusOr<std::vector<tuner::Timing>> TimeSet(const tuner::GpuSpec& gpu,
                                                     std::span<const tuner::GemmShape> set,
                                                     bool predict_only) {
    v1::TimeGemmsRequest request;
    request.set_gpu(std::string(gpu.name));
    wire::Fill(origin_.options, request.mutable_pin(), request.mutable_mode(),
               request.mutable_runs(), request.mutable_algo());
    request.set_predict_only(predict_only);
    for (const tuner::GemmShape& g : set) wire::Fill(g, request.add_gemms());
    std::string key;
    request.SerializeToString(&key);
    if (auto it = answered_.find(key); it != answered_.end()) return it->second;
    v1::TimeGemmsResponse response;
    if (auto s = CallUnary(channel_, &v1::Crest::Stub::TimeGemms, request, &response); !s.ok()) {
      return s;
    }
    auto timings = wire::TimingsOf(response);
    if (timings.size() != set.size()) {
      return absl::InternalError(StrCat(origin_.description, " answered ", timings.size(),
                                        " times for ", set.size(), " GEMMs"));
    }
    return answered_.emplace(std::move(key), std::move(timings)).first->second;
  }

  answers::SetTimers TimersFor(const tuner::GpuSpec& gpu) {
    answers::SetTimers t;
    t.time = [this, &gpu](std::span<const tuner::GemmShape> set) {
      return TimeSet(gpu, set, false);
    };
    t.predict = [this, &gpu](std::span<const tuner::GemmShape> set) {
      return TimeSet(gpu, set, true);
    };
    return t;
  }

  DaemonChannel channel_;
  answers::AnswerOrigin origin_;
  std::map<std::string, std::vector<tuner::Timing>> answered_;
};

}  // namespace

std::unique_ptr<answers::Answers> RemoteAnswers(DaemonChannel channel,
                                                answers::AnswerOptions options) {
  return std::make_unique<DaemonAnswers>(std::move(channel), options);
}

}  // namespace crest::remote
