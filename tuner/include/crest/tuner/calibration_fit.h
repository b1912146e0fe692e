// Fitting tilewave-2 to measured (or imported) GEMM times for one GPU and
// dtype, and judging a model against them. The fit sets what the data can
// tell and keeps the rest: the fast family's sustained rate and its factors
// by alignment class, the fallback family's rate and its factor per
// misaligned input by class. Each is estimated in log space from the median
// of each group of rows that share it (so noise and outliers pull little),
// by least squares with a weak pull toward the model in force (so a
// parameter the rows cannot separate stays where it was).
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::tuner {

struct TimedGemm {
  GemmShape gemm;
  double time_us = 0;  // measured or imported [µs]
};

// How `params` fits `rows` on `gpu`: per GEMM, and per SwiGLU MLP d_ff
// window found among the rows (at least 8 candidates with both GEMMs).
FitMetrics Evaluate(std::span<const TimedGemm> rows, const GpuSpec& gpu, const ModelParams& params);

struct FitRequest {
  const GpuSpec* gpu = nullptr;
  DType dtype = DType::kBf16;
  ModelParams before;  // the model in force; the fit starts from it
  CalibrationProvenance provenance;
};

inline constexpr int64_t kMinFitRows = 8;
// The quantile of the held-out errors of each class a prediction's interval
// reaches (ModelParams::expected_error; Calibration::interval). Truly held
// out (bench/predictor_holdout.sh, each H100 window left out of the whole
// fit and measured again), 0.8 held 59% of a window's d_ff multiples of 8,
// 0.9 held 75%, 0.95 holds 84-100%: the least of them that holds 80% on
// every Crest timing of every window (docs/predictor.md).
inline constexpr double kIntervalQuantile = 0.95;

// Fits a calibration to the rows of the request's dtype. FailedPrecondition
// when fewer than kMinFitRows rows are usable (compute-bound, launch cost
// small against them); the message counts what was left out and why.
absl::StatusOr<Calibration> FitCalibration(std::span<const TimedGemm> rows,
                                           const FitRequest& request);

// `params` with both family rates as absolute figures (the defaults derive
// them from the dtype's peak).
ModelParams ExplicitRates(const ModelParams& params, const GpuSpec& gpu, DType dtype);

// Spearman's rank correlation (average ranks for ties); 0 for fewer than 2.
double SpearmanCorrelation(std::span<const double> x, std::span<const double> y);

}  // namespace crest::tuner
