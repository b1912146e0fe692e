// Answers from the result store alone (no GPU, no model run): the d_ff
// ranking and single-GEMM lookups that `crest dff --db`, `crest lookup` and
// crestd serve.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::answers {

// Ranks the query's window from the store: for each candidate, measurements
// when every GEMM of its MLP is measured on `gpu` in the query's mode (cache
// mode and clock policy; newest software, or the pinned one), else this
// build's predictions when every GEMM has one, else the candidate is missing
// (counted, not ranked). Measured rows carry the interval of their time, and
// rows that cannot be told apart share a tie group.
absl::StatusOr<DffRanking> RankDffFromStore(const DffQuery& query, const GpuSpec& gpu,
                                            store::Store& db, const store::SoftwarePin& pin);

struct GemmAnswer {
  std::optional<store::MeasurementRow> measured;  // best verified algorithm
  std::optional<store::PredictionRow> predicted;  // when nothing is measured
};

// The best known result for one GEMM on `gpu`, measured in `mode`. Both
// empty: the store knows nothing of it.
absl::StatusOr<GemmAnswer> LookupGemm(const GemmShape& gemm, const GpuSpec& gpu, store::Store& db,
                                      const store::SoftwarePin& pin, const MeasureMode& mode);

// "NVIDIA H100 80GB HBM3 GPU-… on node7; driver 580.1, CUDA 13000, cuBLASLt 130100"
std::string DescribeProvenance(const DeviceInfo& device, const SoftwareInfo& software);

}  // namespace crest::answers
