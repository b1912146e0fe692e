// The one answering interface: every question a user asks Crest (the d_ff,
// vocabulary and design rankings, one GEMM's best known result, the model's
// breakdown of a GEMM) is answered through an Answers, chosen once when a
// program starts:
//  - ModelAnswers: this build's analytic model (every figure predicted);
//  - StoreAnswers: a result database, measured where it has measurements
//    (each candidate's GEMMs from one run, or a pool of runs it names), the
//    model filling what the database lacks (crestd answers this way);
//  - a remote one, asking a crestd (the crest CLI's, over gRPC).
// Every figure an answer holds says its kind (Source) and where it came from.
//
// Thread safety: an Answers is used from one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/store/records.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::store {
class Store;  // crest/store/store.h: a caller of StoreAnswers or TimeGemmSet has one
}  // namespace crest::store

// The rankings' and times' types, which a caller of Vocab, Design,
// TimeGemmSet or TimingOf includes (design.h, vocab.h, timing.h): declared
// here so that the files that name an Answers and ask it none of these do
// not depend on them.
namespace crest::tuner {
struct DesignConfig;
struct DesignOptions;
struct DesignRow;
struct Timing;
struct VocabQuery;
struct VocabRanking;
}  // namespace crest::tuner

namespace crest::answers {

// How a measured answer combines runs (a run: one sweep job on one device).
enum class RunChoice {
  // Each candidate from the most recent run that measured all of its GEMMs,
  // on the newest allowed software version that has such a run (versions
  // are never mixed), in the mode asked; a candidate no one run measured
  // whole is predicted. The default.
  kLatest,
  // Every run of the newest allowed software version that measured every
  // GEMM, pooled: per GEMM the median of the runs' medians (with an even
  // count the mean of the two middle ones), its interval covering the runs'
  // intervals; labelled pooled, never as one run's figure.
  kAll,
};
std::string_view RunChoiceName(RunChoice choice);  // "latest", "all"
std::optional<RunChoice> ParseRunChoice(std::string_view text);

// Which measurements answer. Results of other modes or software are never
// used, and never mixed in.
struct AnswerOptions {
  store::SoftwarePin pin;   // default: any software (the newest first for a lookup)
  tuner::MeasureMode mode;  // default: cold L2, sustained clocks
  RunChoice runs = RunChoice::kLatest;
  // Which algorithm answers for each measured GEMM: the fastest Crest's
  // search found, or cuBLASLt's first choice (what an unpinned call runs).
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;
  // Let a stored race of the measured headline's run order a d_ff answer's
  // leading rows (DffRanking::race). Off: the per-GEMM pass alone, as a
  // sweep reads it to choose what to race.
  bool races = true;
  // The model's prediction alone: no database is read (through a crestd,
  // its model predicts). Honoured by d_ff answers (`crest dff --predict-only`).
  bool predict_only = false;
};

// One GEMM's best known result.
struct GemmAnswer {
  // The run's fastest verified algorithm (pooled: the lower middle run's,
  // whose own figures it keeps; the pooled figure is pooled_us).
  std::optional<store::MeasurementRow> measured;
  // When nothing is measured: the database's prediction or the model's now.
  std::optional<store::PredictionRow> predicted;
  std::vector<tuner::RunInfo> runs;  // measured: the run, or every run pooled
  bool pooled = false;
  double pooled_us = 0;      // pooled: the median of the runs' medians
  double pooled_low_us = 0;  // pooled: the interval covering the runs' intervals
  double pooled_high_us = 0;
};

// Where an Answers answers from, as every answer says it. (A figure's kind,
// measured or predicted, is its Source; this is the database or daemon.)
struct AnswerOrigin {
  std::string description;  // "this build's model", "node.db", "crestd at host:port"
  AnswerOptions options;
  bool database = false;  // measured figures can answer (a database or a crestd)
};

class Answers {
 public:
  virtual ~Answers() = default;

  virtual const AnswerOrigin& origin() const = 0;

  // The d_ff candidates of the query, ranked (dff_ranking.h). Candidates
  // the model has no path for are counted missing; FailedPrecondition when
  // no candidate has an answer.
  virtual absl::StatusOr<tuner::DffRanking> Dff(const tuner::DffQuery& query,
                                                const tuner::GpuSpec& gpu) = 0;
  // Vocabulary paddings, ranked (vocab.h).
  virtual absl::StatusOr<tuner::VocabRanking> Vocab(const tuner::VocabQuery& query,
                                                    const tuner::GpuSpec& gpu) = 0;
  // Each configuration evaluated (design.h), then ranked (RankDesigns).
  virtual absl::StatusOr<std::vector<tuner::DesignRow>> Design(
      std::span<const tuner::DesignConfig> configs, const tuner::DesignOptions& options,
      const tuner::GpuSpec& gpu) = 0;
  // One GEMM's best known result; both empty only when nothing answers (no
  // model path for its dtype on `gpu`).
  virtual absl::StatusOr<GemmAnswer> Lookup(const tuner::GemmShape& gemm,
                                            const tuner::GpuSpec& gpu) = 0;
  // The model's breakdown of one GEMM (the answering side's model).
  virtual absl::StatusOr<tuner::Prediction> Predict(const tuner::GemmShape& gemm,
                                                    const tuner::GpuSpec& gpu) = 0;
};

// This build's model: every figure predicted.
std::unique_ptr<Answers> ModelAnswers();

// Answers from `db` (which must outlive the result), the model filling what
// it lacks. `description` names the database in answers.
std::unique_ptr<Answers> StoreAnswers(store::Store& db, std::string description,
                                      AnswerOptions options);
// The same, owning the store.
std::unique_ptr<Answers> StoreAnswers(std::unique_ptr<store::Store> db, std::string description,
                                      AnswerOptions options);

// Times GEMMs that belong together from `db` as StoreAnswers does (one run,
// or the pool of runs, else predicted); `predict_only`: predicted alone (the
// store's predictions, or the model now). NotFound when nothing answers one.
absl::StatusOr<std::vector<tuner::Timing>> TimeGemmSet(store::Store& db, const tuner::GpuSpec& gpu,
                                                       const AnswerOptions& options,
                                                       std::span<const tuner::GemmShape> gemms,
                                                       bool predict_only);

// A prediction as the store would keep it (no host, no time of writing).
store::PredictionRow PredictionRowOf(const tuner::GemmShape& gemm, const tuner::GpuSpec& gpu,
                                     const tuner::Prediction& prediction);

// "NVIDIA H100 80GB HBM3 GPU-… on node7; driver 580.1, CUDA runtime 13000,
// cuBLASLt 130100"
std::string DescribeProvenance(const tuner::DeviceInfo& device,
                               const tuner::SoftwareInfo& software);
// The same, and how it was measured: "…; cold L2, sustained clocks".
std::string DescribeMeasurement(const tuner::DeviceInfo& device,
                                const tuner::SoftwareInfo& software,
                                const tuner::MeasureMode& mode);

// The Timing of a GEMM's answer (measured: the median and its interval, or
// the pooled interval; predicted: the expected error around the time).
// NotFound when the answer is empty.
absl::StatusOr<tuner::Timing> TimingOf(const GemmAnswer& answer, const tuner::GemmShape& gemm);

}  // namespace crest::answers
