// The analytic tile/wave/alignment/roofline model of one GEMM's time on a
// catalogued GPU (tilewave-2). Its answers are predictions, never
// measurements: every result carries its model version and the calibration
// in force (calibration.h), or says it runs on uncalibrated defaults.
// Assumptions and parameters: docs/predictor.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::tuner {

inline constexpr std::string_view kPredictorVersion = "tilewave-2";

struct Calibration;  // calibration.h

struct TileShape {
  int m = 0;
  int n = 0;
};

// The CTA output tiles the vendor libraries use, largest first.
inline constexpr std::array<TileShape, 8> kTileShapes = {
    {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64}, {64, 128}, {64, 64}}};

// The kernels a library picks from: the fast family needs every operand's
// contiguous dimension 16-byte aligned; the fallback family runs the rest.
enum class KernelFamily { kFast, kFallback };
std::string_view KernelFamilyName(KernelFamily family);  // "fast", "fallback"

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

// True when both inputs' contiguous dimension is K and K is not 16-byte
// aligned: the case whose fallback rate varies with K mod 128.
bool BothInputsAlongMisalignedK(const GemmShape& gemm, const GpuSpec& gpu);

// Alignment of the contiguous (leading) dimension of one operand.
struct OperandAlignment {
  int64_t elements = 0;   // contiguous dimension [elements]
  int64_t bytes = 0;      // the same [bytes]
  int64_t alignment = 0;  // largest power of two dividing bytes, capped at 128 [bytes]
  double factor = 1;      // the rate factor this operand brings in its family
};

struct Prediction {
  double time_us = 0;
  double tflops = 0;
  TileEstimate best;                                   // the tile chosen
  std::array<TileEstimate, kTileShapes.size()> tiles;  // every tile considered, kTileShapes order
  OperandAlignment a, b, c;
  KernelFamily family = KernelFamily::kFast;
  double family_tflops = 0;     // the family's sustained full-rate tile rate [TFLOP/s]
  double alignment_factor = 1;  // the GEMM's alignment factor on that rate
  // Within alignment_factor: the factor of K's residue mod 128 when both
  // inputs run along a misaligned K (ModelParams::fallback_k_residue), else 1.
  double k_residue_factor = 1;
  int k_residue = 0;       // K mod kKResiduePeriod
  double peak_tflops = 0;  // dense datasheet peak for the dtype (boost clock)
  bool memory_bound = false;
  // The relative half-width of the prediction's interval: the model's error
  // for the GEMM's error class (ModelParams::expected_error[error_class]).
  double expected_error = 0;
  // Its index in kErrorClasses: the layout (NT or other), then the fast
  // family by the operands' smallest alignment, or the fallback family.
  size_t error_class = 0;
  std::string_view model_version;  // "tilewave-2", or "tilewave-2+<calibration id>"
  std::string_view calibration;    // the model in force, in words
  std::shared_ptr<const Calibration> calibration_ref;  // keeps the two strings alive
};

// InvalidArgument "dtype: <gpu> has no dense <dtype> path" when the GPU
// cannot run the dtype on tensor cores or in its FP32 units at all: nothing,
// measured or predicted, can answer for it.
absl::Status CheckDtypePath(const GpuSpec& gpu, DType dtype);

// Predicts `gemm` on `gpu` with the model in force for the GPU and the
// GEMM's dtype: a loaded calibration (calibration.h), else the catalogue's
// defaults. InvalidArgument for non-positive or oversized dimensions (naming
// m, n, k or batch) and for a dtype the GPU has no path for. Thread-safe;
// allocates nothing.
absl::StatusOr<Prediction> Predict(const GemmShape& gemm, const GpuSpec& gpu);
// The same with explicit parameters (the calibration fit; tests). The
// result's version and calibration text are those of `params`.
absl::StatusOr<Prediction> PredictWith(const GemmShape& gemm, const GpuSpec& gpu,
                                       const ModelParams& params);

// The model's sustained fast-kernel rate for a dtype on a GPU [TFLOP/s]: a
// large aligned GEMM's (8192³) family rate, under the calibration in force;
// 0 where the dtype has no path.
double FastKernelTflops(const GpuSpec& gpu, DType dtype);

// The version string stored with predictions for this GPU and dtype: the
// model version, plus the calibration's id when one is in force.
std::string ModelVersionFor(const GpuSpec& gpu, DType dtype);

// The tile and wave arithmetic alone (no timing) of `gemm` cut into `tile`
// CTAs on `sm_count` SMs: tiles, waves, tile/wave/K efficiency, CTAs per SM.
// REQUIRES: sizes valid (ValidateGemmSizes), sm_count > 0.
TileEstimate QuantizeTiles(const GemmShape& gemm, TileShape tile, int sm_count);

// Checks the sizes of an ad-hoc GEMM against limits.h; shared by the CLI and
// the predictor. InvalidArgument names the field.
absl::Status ValidateGemmSizes(int64_t m, int64_t n, int64_t k, int64_t batch);

}  // namespace crest::tuner
