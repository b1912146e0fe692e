#include "crest/tuner/predictor.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/limits.h"
#include "sizes.h"

namespace crest::tuner {
namespace {

// The mainloop walks K in steps of this many bytes of each operand.
constexpr int64_t kKStepBytes = 128;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

OperandAlignment Align(int64_t elements, int element_bytes) {
  OperandAlignment out;
  out.elements = elements;
  out.bytes = elements * element_bytes;
  const auto low_bit = static_cast<int64_t>(
      std::bit_floor(static_cast<uint64_t>(out.bytes) & (~static_cast<uint64_t>(out.bytes) + 1)));
  out.alignment = std::min<int64_t>(low_bit, 128);
  return out;
}

// Index of a fast-family class (16, 32, 64, 128 B) or a fallback input
// class (≤2, 4, 8 B).
size_t FastClass(int64_t alignment) {
  return static_cast<size_t>(
      std::countr_zero(static_cast<uint64_t>(std::max<int64_t>(alignment, 16))) - 4);
}
size_t FallbackClass(int64_t alignment) {
  return static_cast<size_t>(std::max(std::countr_zero(static_cast<uint64_t>(alignment)), 1) - 1);
}

// The family, its rate and each operand's factor.
void ChooseFamily(const GemmShape& g, Prediction& p, const GpuSpec& gpu,
                  const ModelParams& params) {
  p.k_residue = static_cast<int>(g.k % kKResiduePeriod);
  const int64_t min_alignment = std::min({p.a.alignment, p.b.alignment, p.c.alignment});
  const double fast = params.fast_tflops > 0 ? params.fast_tflops
                                             : p.peak_tflops * params.compute_efficiency *
                                                   params.sustained_clock_ratio;
  if (min_alignment >= gpu.min_alignment_bytes) {
    p.family = KernelFamily::kFast;
    p.family_tflops = fast;
    for (OperandAlignment* o : {&p.a, &p.b, &p.c}) {
      o->factor = params.fast_align[FastClass(o->alignment)];
    }
    p.alignment_factor = std::min({p.a.factor, p.b.factor, p.c.factor});
    return;
  }
  p.family = KernelFamily::kFallback;
  p.family_tflops =
      params.fallback_tflops > 0 ? params.fallback_tflops : fast * params.fallback_ratio;
  for (OperandAlignment* o : {&p.a, &p.b}) {
    o->factor = o->alignment >= gpu.min_alignment_bytes
                    ? 1.0
                    : params.fallback_input[FallbackClass(o->alignment)];
  }
  p.c.factor = 1.0;  // C's alignment only chooses the family
  p.k_residue_factor = BothInputsAlongMisalignedK(g, gpu)
                           ? params.fallback_k_residue[static_cast<size_t>(g.k % kKResiduePeriod)]
                           : 1.0;
  p.alignment_factor = p.a.factor * p.b.factor * p.k_residue_factor;
}

// CTAs one SM runs at once for a tile of this area (register and shared
// memory budgets of the libraries' kernels).
int CtasPerSm(TileShape tile) {
  const int area = tile.m * tile.n;
  if (area >= 128 * 128) return 1;
  if (area >= 128 * 64) return 2;
  return 4;
}

int64_t KPadded(const GemmShape& g) {
  const int64_t k_step = kKStepBytes / ElementBytes(g.dtype);
  return CeilDiv(g.k, k_step) * k_step;
}

// The error class of a GEMM's prediction (Prediction::error_class).
size_t ErrorClass(const GemmShape& g, KernelFamily family, const OperandAlignment& a,
                  const OperandAlignment& b, const OperandAlignment& c) {
  const size_t layout = !g.a_transposed && g.b_transposed ? 0 : kErrorKinds;
  if (family == KernelFamily::kFallback) return layout + kErrorKinds - 1;
  const int64_t smallest = std::min({a.alignment, b.alignment, c.alignment, int64_t{128}});
  // 16, 32, 64, 128 B: kinds 0 to 3 (the fast family is never below 16 B).
  const int shift = std::countr_zero(static_cast<uint64_t>(std::max<int64_t>(smallest, 16))) - 4;
  return layout + static_cast<size_t>(std::clamp(shift, 0, 3));
}

}  // namespace

TileEstimate QuantizeTiles(const GemmShape& g, TileShape tile, int sm_count) {
  TileEstimate e;
  e.tile = tile;
  e.ctas_per_sm = CtasPerSm(tile);
  const int64_t tiles_m = CeilDiv(g.m, tile.m);
  const int64_t tiles_n = CeilDiv(g.n, tile.n);
  e.tiles = tiles_m * tiles_n * g.batch;
  const int64_t slots = int64_t{sm_count} * e.ctas_per_sm;
  e.waves = CeilDiv(e.tiles, slots);
  e.tile_efficiency = static_cast<double>(g.m) * static_cast<double>(g.n) /
                      static_cast<double>(tiles_m * tile.m * tiles_n * tile.n);
  e.wave_efficiency = static_cast<double>(e.tiles) / static_cast<double>(e.waves * slots);
  e.k_efficiency = static_cast<double>(g.k) / static_cast<double>(KPadded(g));
  return e;
}

absl::Status ValidateGemmSizes(int64_t m, int64_t n, int64_t k, int64_t batch) {
  using internal::CheckSize;
  if (auto s = CheckSize("m", m, kMaxGemmDim); !s.ok()) return s;
  if (auto s = CheckSize("n", n, kMaxGemmDim); !s.ok()) return s;
  if (auto s = CheckSize("k", k, kMaxGemmDim); !s.ok()) return s;
  if (auto s = CheckSize("batch", batch, kMaxGemmBatch); !s.ok()) return s;
  // Keep every product far from int64 overflow (FLOPs and bytes as doubles).
  const double elements =
      static_cast<double>(batch) * std::max({static_cast<double>(m) * static_cast<double>(n),
                                             static_cast<double>(m) * static_cast<double>(k),
                                             static_cast<double>(n) * static_cast<double>(k)});
  if (elements > 0x1p40) {
    return absl::InvalidArgumentError(
        StrCat("batch·m·n·k: one operand would hold ", elements, " elements (at most 2^40)"));
  }
  return absl::OkStatus();
}

bool BothInputsAlongMisalignedK(const GemmShape& g, const GpuSpec& gpu) {
  const int64_t k_bytes = g.k * ElementBytes(g.dtype);
  return !g.a_transposed && g.b_transposed && k_bytes % gpu.min_alignment_bytes != 0;
}

std::string_view KernelFamilyName(KernelFamily family) {
  return family == KernelFamily::kFast ? "fast" : "fallback";
}

absl::Status CheckDtypePath(const GpuSpec& gpu, DType dtype) {
  if (gpu.PeakTflops(dtype) > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat("dtype: ", gpu.name, " has no dense ", DTypeName(dtype), " path"));
}

absl::StatusOr<Prediction> PredictWith(const GemmShape& g, const GpuSpec& gpu,
                                       const ModelParams& params) {
  if (auto s = ValidateGemmSizes(g.m, g.n, g.k, g.batch); !s.ok()) return s;
  Prediction p;
  p.model_version = kPredictorVersion;
  p.calibration = params.calibration;
  p.peak_tflops = gpu.PeakTflops(g.dtype);
  if (auto s = CheckDtypePath(gpu, g.dtype); !s.ok()) return s;
  const int in_bytes = ElementBytes(g.dtype);
  const int out_bytes = ElementBytes(OutputDType(g.dtype));
  p.a = Align(g.ContiguousA(), in_bytes);
  p.b = Align(g.ContiguousB(), in_bytes);
  p.c = Align(g.ContiguousC(), out_bytes);
  ChooseFamily(g, p, gpu, params);
  p.error_class = ErrorClass(g, p.family, p.a, p.b, p.c);
  p.expected_error = params.expected_error[p.error_class];

  const double m = static_cast<double>(g.m);
  const double n = static_cast<double>(g.n);
  const double batch = static_cast<double>(g.batch);
  const double k_padded = static_cast<double>(KPadded(g));
  const double full_rate_intensity = p.family == KernelFamily::kFast
                                         ? params.fast_full_rate_intensity
                                         : params.fallback_full_rate_intensity;
  // [FLOP/µs] one SM sustains on a full-rate tile.
  const double sm_rate = p.family_tflops * 1e6 / gpu.sm_count;
  const double bytes = batch * ((m + n) * static_cast<double>(g.k) * in_bytes + m * n * out_bytes);
  const double memory_us = bytes / (gpu.memory_bandwidth_gbs * 1e3 * params.memory_efficiency);

  for (size_t i = 0; i < kTileShapes.size(); ++i) {
    const TileShape tile = kTileShapes[i];
    TileEstimate& e = p.tiles[i];
    e = QuantizeTiles(g, tile, gpu.sm_count);
    const double intensity = static_cast<double>(tile.m * tile.n) / (tile.m + tile.n);
    e.reuse_efficiency = std::min(1.0, std::sqrt(intensity / full_rate_intensity));
    const double tile_flops = 2.0 * tile.m * tile.n * k_padded;
    const double wave_us =
        e.ctas_per_sm * tile_flops / (sm_rate * e.reuse_efficiency * p.alignment_factor);
    e.compute_us = static_cast<double>(e.waves) * wave_us;
    e.memory_us = memory_us;
    e.time_us = std::max(e.compute_us, e.memory_us) + params.launch_us;
    if (i == 0 || e.time_us < p.best.time_us) p.best = e;
  }
  p.time_us = p.best.time_us;
  p.tflops = g.Flops() / p.time_us / 1e6;
  p.memory_bound = p.best.memory_us > p.best.compute_us;
  return p;
}

absl::StatusOr<Prediction> Predict(const GemmShape& g, const GpuSpec& gpu) {
  std::shared_ptr<const Calibration> calibration = ActiveCalibration(gpu.name, g.dtype);
  if (calibration == nullptr) return PredictWith(g, gpu, gpu.model);
  auto p = PredictWith(g, gpu, calibration->params);
  if (!p.ok()) return p;
  p->model_version = calibration->model_version;
  p->calibration = calibration->label;
  p->calibration_ref = std::move(calibration);
  return p;
}

double FastKernelTflops(const GpuSpec& gpu, DType dtype) {
  GemmShape big;
  big.m = big.n = big.k = 8192;
  big.dtype = dtype;
  auto p = Predict(big, gpu);
  return p.ok() ? p->family_tflops : 0;
}

std::string ModelVersionFor(const GpuSpec& gpu, DType dtype) {
  std::shared_ptr<const Calibration> calibration = ActiveCalibration(gpu.name, dtype);
  return calibration == nullptr ? std::string(kPredictorVersion) : calibration->model_version;
}

}  // namespace crest::tuner
