// Public specifications of the GPUs Crest knows, and the predictor's
// parameters for each. Every figure cites its source in gpu_catalogue.cc.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/dtype.h"

namespace crest::tuner {

// Parameters of the analytic predictor (tilewave-2, docs/predictor.md) for
// one GPU and dtype. The catalogue holds assumptions per architecture; a
// calibration (calibration.h) replaces them with values fitted to
// measurements, and `calibration` says which is in force.
//
// Two kernel families: the fast one (Hopper's wgmma/TMA kernels, Ampere's
// 16-byte cp.async ones) runs only when every operand's contiguous dimension
// is 16-byte aligned; otherwise the libraries fall back to kernels with
// narrower loads, their own rate and a penalty per misaligned input.
// K residues the fallback rate is keyed by (ModelParams::fallback_k_residue).
inline constexpr int kKResiduePeriod = 128;

constexpr std::array<double, kKResiduePeriod> OnesByResidue() {
  std::array<double, kKResiduePeriod> ones{};
  for (double& x : ones) x = 1.0;
  return ones;
}

// The classes a prediction's error is kept by (ModelParams::expected_error):
// the operands' layout (NT, the forward form; other: NN, TN and TT, the
// backward GEMMs, whose error differs), then the kernel: the fast family at
// 16, 32, 64, 128 B smallest alignment, or the fallback family. Their names
// as calibration files and reports write them.
inline constexpr size_t kErrorKinds = 5;  // fast.16, fast.32, fast.64, fast.128, fallback
inline constexpr std::array<std::string_view, 2 * kErrorKinds> kErrorClasses = {
    "nt.fast.16",    "nt.fast.32",    "nt.fast.64",    "nt.fast.128",    "nt.fallback",
    "other.fast.16", "other.fast.32", "other.fast.64", "other.fast.128", "other.fallback"};
constexpr bool IsFallbackClass(size_t error_class) {
  return error_class % kErrorKinds == kErrorKinds - 1;
}

struct ModelParams {
  // Fast family: the sustained rate of a full-rate tile [TFLOP/s]; 0 means
  // dense peak × compute_efficiency × sustained_clock_ratio (uncalibrated).
  double fast_tflops = 0;
  double compute_efficiency = 0.8;     // fraction of dense peak at the boost clock
  double sustained_clock_ratio = 1.0;  // sustained (power-capped) / boost SM clock
  // Rate factor by the GEMM's smallest operand alignment: 16, 32, 64, 128 B.
  std::array<double, 4> fast_align = {0.97, 0.98, 0.99, 1.0};
  double fast_full_rate_intensity = 64;  // tile reuse tm·tn/(tm+tn) at full rate
  // Fallback family: the rate with 16-byte aligned inputs [TFLOP/s]; 0
  // means fast rate × fallback_ratio (uncalibrated).
  double fallback_tflops = 0;
  double fallback_ratio = 0.5;
  // Rate factor per input operand (A, B) aligned to 2 (or 1), 4, 8 bytes.
  std::array<double, 3> fallback_input = {0.5, 0.75, 0.9};
  // Rate factor by K mod 128 when both inputs run along a misaligned K (A's
  // and B's contiguous dimension is K: the SwiGLU down projection's forward
  // form). The fallback kernels' speed repeats with K's residue within an
  // alignment class (measured on an H100: period 128, ±10%); a calibration
  // fits it where it replicates (each class's factors have median 1, so the
  // class factor keeps its meaning). 1 unless fitted; residues that are
  // multiples of 8 never apply.
  std::array<double, kKResiduePeriod> fallback_k_residue = OnesByResidue();
  double fallback_full_rate_intensity = 64;
  double memory_efficiency = 0.85;  // achievable fraction of memory bandwidth
  double launch_us = 2.5;           // fixed per-GEMM cost [µs]
  // The half-width of a prediction's interval, relative to its time, by
  // error class (kErrorClasses: the layout, then the fast family by the
  // GEMM's smallest operand alignment or the fallback family): when
  // calibrated, the error the model reached on kIntervalQuantile of the
  // class's GEMMs in d_ff windows left out of its fit (calibration_fit.h);
  // an assumption otherwise. Rankings tie candidates whose intervals meet.
  std::array<double, kErrorClasses.size()> expected_error = {0.25, 0.25, 0.25, 0.25, 0.25,
                                                             0.25, 0.25, 0.25, 0.25, 0.25};
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
  // The datasheet's boost SM clock [MHz] and board power limit [W]: what a
  // calibration moves between GPUs of one architecture by
  // (calibration_transfer.h).
  double boost_clock_mhz = 0;
  double power_w = 0;
  // The GPU-to-GPU link tensor parallelism runs over: its name and its
  // bandwidth per direction per GPU [GB/s] (tp_comm.h).
  std::string_view link;
  double link_gbs = 0;

  // Peak for a dtype [TFLOP/s]; 0 when unsupported.
  double PeakTflops(DType dtype) const;
};

// Every catalogued GPU, in a stable order (oldest architecture first).
std::span<const GpuSpec> GpuCatalogue();

// Case-insensitive match of the canonical name or an alias ("h100" finds
// "H100-SXM"); spaces, '_' and '-' are ignored. NotFound lists known names.
absl::StatusOr<const GpuSpec*> FindGpu(std::string_view name);

}  // namespace crest::tuner
