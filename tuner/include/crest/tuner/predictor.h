// The analytic tile/wave/alignment/roofline model of one GEMM's time on a
// catalogued GPU. Its answers are predictions, never measurements: every
// result carries kPredictorVersion. Assumptions: docs/predictor.md.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest {

inline constexpr std::string_view kPredictorVersion = "tilewave-1";

struct TileShape {
  int m = 0;
  int n = 0;
};

// The CTA output tiles the vendor libraries use, largest first.
inline constexpr std::array<TileShape, 8> kTileShapes = {
    {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64}, {64, 128}, {64, 64}}};

// The model's view of one GEMM run with one tile shape.
struct TileEstimate {
  TileShape tile;
  int ctas_per_sm = 1;
  int64_t tiles = 0;            // ⌈M/tm⌉·⌈N/tn⌉·batch
  int64_t waves = 0;            // ⌈tiles / (SMs·ctas_per_sm)⌉
  double tile_efficiency = 0;   // M·N / (⌈M/tm⌉·tm · ⌈N/tn⌉·tn)
  double wave_efficiency = 0;   // tiles / (waves·SMs·ctas_per_sm)
  double k_efficiency = 0;      // K / K rounded up to the tile's K step
  double reuse_efficiency = 0;  // the tile's data reuse against full rate
  double compute_us = 0;        // quantized compute time [µs]
  double memory_us = 0;         // minimum traffic / achievable bandwidth [µs]
  double time_us = 0;           // max(compute, memory) + launch [µs]
};

// Alignment of the contiguous (leading) dimension of one operand.
struct OperandAlignment {
  int64_t elements = 0;   // contiguous dimension [elements]
  int64_t bytes = 0;      // the same [bytes]
  int64_t alignment = 0;  // largest power of two dividing bytes, capped at 128 [bytes]
  double factor = 1;      // rate multiplier the model applies
};

struct Prediction {
  double time_us = 0;
  double tflops = 0;
  TileEstimate best;                                   // the tile chosen
  std::array<TileEstimate, kTileShapes.size()> tiles;  // every tile considered, kTileShapes order
  OperandAlignment a, b, c;
  double alignment_factor = 1;  // min over A, B, C
  double peak_tflops = 0;       // dense peak for the dtype
  bool memory_bound = false;
  std::string_view model_version = kPredictorVersion;
};

// Predicts `gemm` on `gpu`. InvalidArgument for non-positive or oversized
// dimensions (naming m, n, k or batch) and for a dtype the GPU has no path
// for. Thread-safe; allocates nothing.
absl::StatusOr<Prediction> Predict(const GemmShape& gemm, const GpuSpec& gpu);

// The tile and wave arithmetic alone (no timing) of `gemm` cut into `tile`
// CTAs on `sm_count` SMs: tiles, waves, tile/wave/K efficiency, CTAs per SM.
// REQUIRES: sizes valid (ValidateGemmSizes), sm_count > 0.
TileEstimate QuantizeTiles(const GemmShape& gemm, TileShape tile, int sm_count);

// Checks the sizes of an ad-hoc GEMM against limits.h; shared by the CLI and
// the predictor. InvalidArgument names the field.
absl::Status ValidateGemmSizes(int64_t m, int64_t n, int64_t k, int64_t batch);

}  // namespace crest
