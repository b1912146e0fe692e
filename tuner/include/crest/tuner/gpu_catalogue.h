// Public specifications of the GPUs Crest knows, and the predictor's
// parameters for each. Every figure cites its source in gpu_catalogue.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/dtype.h"

namespace crest {

// Parameters of the analytic predictor for one GPU (docs/predictor.md). The
// defaults are assumptions per architecture until a calibration replaces
// them; `calibration` says which.
struct ModelParams {
  double compute_efficiency = 0.8;  // achievable fraction of dense peak, large GEMMs
  double memory_efficiency = 0.85;  // achievable fraction of memory bandwidth
  double full_rate_intensity = 64;  // tile reuse tm·tn/(tm+tn) that reaches full rate
  double misaligned_factor = 0.5;   // rate when an operand is not 16-byte aligned
  double launch_us = 2.5;           // fixed per-GEMM cost [µs]
  std::string_view calibration = "uncalibrated architecture defaults";
};

struct GpuSpec {
  std::string_view name;          // canonical, e.g. "H100-SXM"
  std::string_view architecture;  // "Volta", "Ampere", "Ada", "Hopper", "Blackwell"
  std::string_view compute_capability;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  double memory_gib = 0;
  double memory_bandwidth_gbs = 0;  // [GB/s, 10^9 bytes]
  // Dense (no sparsity) peak [TFLOP/s]; 0 where the GPU has no such path.
  double peak_fp32 = 0;
  double peak_tf32 = 0;
  double peak_fp16 = 0;  // tensor cores, fp32 accumulate
  double peak_bf16 = 0;
  double peak_fp8 = 0;
  int min_alignment_bytes = 16;         // contiguous dims below this lose tensor cores
  int preferred_alignment_bytes = 128;  // and run best at multiples of this
  std::span<const std::string_view> aliases;
  ModelParams model;

  // Peak for a dtype [TFLOP/s]; 0 when unsupported.
  double PeakTflops(DType dtype) const;
};

// Every catalogued GPU, in a stable order (oldest architecture first).
std::span<const GpuSpec> GpuCatalogue();

// Case-insensitive match of the canonical name or an alias ("h100" finds
// "H100-SXM"); spaces, '_' and '-' are ignored. NotFound lists known names.
absl::StatusOr<const GpuSpec*> FindGpu(std::string_view name);

}  // namespace crest
