// Answers from the result store alone (no GPU, no model run): the d_ff
// ranking and single-GEMM lookups that `crest dff --db`, `crest lookup` and
// crestd serve.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::answers {

// Ranks the query's window from the store: for each candidate, measurements
// when every GEMM of its MLP is measured on `gpu` in the query's mode (cache
// mode and clock policy; newest software, or the pinned one), else
// predictions (the store's, or this build's model run now for GEMMs the store
// lacks: the same model version), so that a window the store has never seen
// is still answered, as predicted. A candidate is missing (counted, not
// ranked) only when the model has no path for it. Measured and predicted
// rows are ranked within their own kind (DffRanking::rows), each kind's
// speed-ups against the baseline's time of that kind. Measured rows carry
// the interval of their time, and rows that cannot be told apart share a
// tie group.
absl::StatusOr<DffRanking> RankDffFromStore(const DffQuery& query, const GpuSpec& gpu,
                                            store::Store& db, const store::SoftwarePin& pin);

struct GemmAnswer {
  std::optional<store::MeasurementRow> measured;  // best verified algorithm
  std::optional<store::PredictionRow> predicted;  // when nothing is measured
};

// The best known result for one GEMM on `gpu`: measured in `mode`, else the
// store's prediction, else the same model run now (labelled predicted, with
// its version). Both empty only when the model has no path for the GEMM's
// dtype on `gpu`.
absl::StatusOr<GemmAnswer> LookupGemm(const GemmShape& gemm, const GpuSpec& gpu, store::Store& db,
                                      const store::SoftwarePin& pin, const MeasureMode& mode);

// A prediction as the store would keep it (no host, no time of writing).
store::PredictionRow PredictionRowOf(const GemmShape& gemm, const GpuSpec& gpu,
                                     const Prediction& prediction);

// "NVIDIA H100 80GB HBM3 GPU-… on node7; driver 580.1, CUDA 13000, cuBLASLt 130100"
std::string DescribeProvenance(const DeviceInfo& device, const SoftwareInfo& software);

}  // namespace crest::answers
