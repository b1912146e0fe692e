#include "crest/tuner/gpu_catalogue.h"

#include <array>
#include <string>

#include "crest/common/str_cat.h"
#include "text.h"

namespace crest::tuner {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Predictor defaults per architecture (docs/predictor.md). Assumptions, not
// fits: the compute efficiencies are the fraction of dense peak that large,
// aligned cuBLAS GEMMs are commonly reported to reach at the boost clock; the
// fallback ratios and per-input factors are guesses (half rate for Hopper's
// fallback, as tilewave-1 assumed). Two figures are measured: Hopper's
// sustained clock ratio is an H100's power-capped 1455 MHz over its 1980 MHz
// boost (shared/data/h100-2026-11-22, clock trace), assumed for every Hopper
// part; Ampere's is an A100's ~1200 MHz under FlashAttention-2 load, held by
// its power limit, over its 1410 MHz boost (reported in liangan1/GPU_travel,
// performance/flash-attn/README.md), assumed for every Ampere part. A
// calibration replaces all of them for its GPU and dtype.
constexpr ModelParams Defaults(double efficiency, double clock_ratio, double fast_intensity,
                               double fallback_ratio, double launch_us,
                               std::string_view calibration) {
  ModelParams p;
  p.compute_efficiency = efficiency;
  p.sustained_clock_ratio = clock_ratio;
  p.fast_full_rate_intensity = fast_intensity;
  p.fallback_ratio = fallback_ratio;
  p.launch_us = launch_us;
  p.calibration = calibration;
  return p;
}
constexpr ModelParams kVolta = Defaults(0.85, 0.95, 48, 0.5, 3.0, "uncalibrated Volta defaults");
constexpr ModelParams kAmpere = Defaults(0.88, 0.85, 64, 0.6, 2.5, "uncalibrated Ampere defaults");
constexpr ModelParams kAda = Defaults(0.85, 0.9, 64, 0.6, 2.5, "uncalibrated Ada defaults");
constexpr ModelParams kHopper = Defaults(0.80, 0.735, 85, 0.5, 2.5, "uncalibrated Hopper defaults");
constexpr ModelParams kBlackwell =
    Defaults(0.80, 0.8, 85, 0.5, 2.5, "uncalibrated Blackwell defaults");

constexpr std::array<std::string_view, 3> kV100Aliases{"v100", "v100-sxm2", "tesla-v100"};
constexpr std::array<std::string_view, 2> kA100Sxm40Aliases{"a100-40gb", "a100-sxm4-40gb"};
constexpr std::array<std::string_view, 3> kA100Sxm80Aliases{"a100", "a100-80gb", "a100-sxm4-80gb"};
constexpr std::array<std::string_view, 2> kA100PcieAliases{"a100-pcie-80gb", "a100pcie"};
constexpr std::array<std::string_view, 1> kA10Aliases{"nvidia-a10"};
constexpr std::array<std::string_view, 1> kL4Aliases{"nvidia-l4"};
constexpr std::array<std::string_view, 1> kL40sAliases{"nvidia-l40s"};
constexpr std::array<std::string_view, 3> kRtx4090Aliases{"4090", "rtx4090", "geforce-rtx-4090"};
constexpr std::array<std::string_view, 4> kH100SxmAliases{"h100", "h100-sxm5", "h100-80gb-hbm3",
                                                          "nvidia-h100-80gb-hbm3"};
constexpr std::array<std::string_view, 1> kH100PcieAliases{"h100pcie"};
constexpr std::array<std::string_view, 3> kH200Aliases{"h200-sxm", "nvidia-h200", "h200-141gb"};
constexpr std::array<std::string_view, 2> kGh200Aliases{"gh200-96gb", "grace-hopper"};
constexpr std::array<std::string_view, 2> kH800Aliases{"h800-sxm", "nvidia-h800"};
constexpr std::array<std::string_view, 2> kB200Aliases{"b200-sxm", "nvidia-b200"};

// Field order: name, architecture, compute capability, SMs, L2 [bytes],
// memory [GiB], bandwidth [GB/s], dense peaks fp32/tf32/fp16/bf16/fp8
// [TFLOP/s], min and preferred alignment [bytes], aliases, model parameters,
// boost SM clock [MHz], board power [W], GPU-to-GPU link and its bandwidth
// per direction [GB/s] (the same datasheets unless noted: NVLink's figure is
// the datasheet's total over both directions, halved; PCIe x16 is 32 GB/s a
// direction at 4.0, 64 at 5.0; the A100 PCIe and H100 PCIe are taken without
// their optional NVLink bridges).
const std::array<GpuSpec, 14> kCatalogue = {{
    // NVIDIA Tesla V100 SXM2 datasheet (2020): 15.7 FP32, 125 tensor (fp16),
    // 900 GB/s HBM2, 32 GB; Volta whitepaper: 80 SMs, 6 MB L2. No tf32/bf16/fp8.
    {"V100", "Volta", "7.0", 80, 6 * kMiB,     32,     900,  15.7, 0,          125,
     0,      0,       16,    64, kV100Aliases, kVolta, 1530, 300,  "NVLink 2", 150},
    // NVIDIA A100 Tensor Core GPU datasheet (2021): 19.5 FP32, 156 TF32,
    // 312 FP16/BF16 dense; 40 GB HBM2 at 1,555 GB/s. Ampere whitepaper:
    // 108 SMs, 40 MB L2.
    {"A100-SXM-40GB",   "Ampere", "8.0", 108, 40 * kMiB,  40, 1555, 19.5, 156, 312, 312, 0, 16, 128,
     kA100Sxm40Aliases, kAmpere,  1410,  400, "NVLink 3", 300},
    // Same datasheet, 80 GB HBM2e at 2,039 GB/s (SXM).
    {"A100-SXM-80GB",   "Ampere", "8.0", 108, 40 * kMiB,  80, 2039, 19.5, 156, 312, 312, 0, 16, 128,
     kA100Sxm80Aliases, kAmpere,  1410,  400, "NVLink 3", 300},
    // Same datasheet, PCIe 80 GB at 1,935 GB/s; the same peaks.
    {"A100-PCIe",
     "Ampere",
     "8.0",
     108,
     40 * kMiB,
     80,
     1935,
     19.5,
     156,
     312,
     312,
     0,
     16,
     128,
     kA100PcieAliases,
     kAmpere,
     1410,
     300,
     "PCIe 4.0 x16",
     32},
    // NVIDIA A10 datasheet: 31.2 FP32, 62.5 TF32, 125 FP16/BF16 dense;
    // 24 GB GDDR6 at 600 GB/s. GA102: 72 SMs, 6 MB L2 (Ampere GA102 whitepaper).
    {"A10", "Ampere", "8.6", 72,  6 * kMiB,    24,      600,  31.2, 62.5,           125,
     125,   0,        16,    128, kA10Aliases, kAmpere, 1695, 150,  "PCIe 4.0 x16", 32},
    // NVIDIA L4 datasheet: 30.3 FP32; sparse 120 TF32, 242 FP16/BF16, 485 FP8,
    // halved here for dense; 24 GB at 300 GB/s. Ada whitepaper: 58 SMs, 48 MB L2.
    {"L4",  "Ada", "8.9", 58,         48 * kMiB, 24,   300, 30.3,           60, 121, 121,
     242.5, 16,    128,   kL4Aliases, kAda,      2040, 72,  "PCIe 4.0 x16", 32},
    // NVIDIA L40S datasheet: 91.6 FP32; sparse 366 TF32, 733 FP16/BF16,
    // 1,466 FP8, halved for dense; 48 GB GDDR6 at 864 GB/s; 142 SMs, 96 MB L2.
    {"L40S", "Ada", "8.9", 142,          96 * kMiB, 48,   864, 91.6,           183, 366.5, 366.5,
     733,    16,    128,   kL40sAliases, kAda,      2520, 350, "PCIe 4.0 x16", 32},
    // NVIDIA Ada Lovelace architecture whitepaper, appendix (RTX 4090):
    // 82.6 FP32; dense, FP32 accumulate: 82.6 TF32, 165.2 FP16/BF16, 330.3 FP8;
    // 128 SMs, 72 MB L2, 24 GB GDDR6X at 1,008 GB/s.
    {"RTX-4090", "Ada", "8.9", 128, 72 * kMiB,       24,   1008, 82.6, 82.6,           165.2,
     165.2,      330.3, 16,    128, kRtx4090Aliases, kAda, 2520, 450,  "PCIe 4.0 x16", 32},
    // NVIDIA H100 Tensor Core GPU datasheet (SXM): 67 FP32; dense 494.7 TF32,
    // 989.4 FP16/BF16, 1,978.9 FP8; 80 GB HBM3 at 3.35 TB/s. Hopper
    // whitepaper: 132 SMs, 50 MB L2 on H100 SXM5.
    {"H100-SXM", "Hopper", "9.0", 132, 50 * kMiB,       80,      3350, 67,  494.7,      989.4,
     989.4,      1978.9,   16,    128, kH100SxmAliases, kHopper, 1980, 700, "NVLink 4", 450},
    // Same datasheet (PCIe): 51 FP32; dense 378 TF32, 756 FP16/BF16,
    // 1,513 FP8; 80 GB HBM2e at 2.0 TB/s; 114 SMs, 50 MB L2.
    {"H100-PCIe",
     "Hopper",
     "9.0",
     114,
     50 * kMiB,
     80,
     2000,
     51,
     378,
     756,
     756,
     1513,
     16,
     128,
     kH100PcieAliases,
     kHopper,
     1755,
     350,
     "PCIe 5.0 x16",
     64},
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): the H100 SXM peaks;
    // 141 GB HBM3e at 4.8 TB/s; 132 SMs. L2: the datasheet gives none; the
    // full GH100 has 60 MB (Hopper whitepaper) and one H200 probed here
    // reported 60 MB through CUDA's device properties.
    {"H200", "Hopper", "9.0", 132, 60 * kMiB,    141,     4800, 67,  494.7,      989.4,
     989.4,  1978.9,   16,    128, kH200Aliases, kHopper, 1980, 700, "NVLink 4", 450},
    // NVIDIA GH200 Grace Hopper Superchip datasheet: the H100 SXM peaks;
    // 96 GB HBM3 at 4.0 TB/s (the 144 GB HBM3e part runs 4.9 TB/s); 132 SMs,
    // 50 MB L2 as H100 SXM5. Its power (450–1000 W) is the module's, CPU and
    // memory included, configurable: 700 W for the GPU is an assumption.
    {"GH200", "Hopper", "9.0", 132, 50 * kMiB,     96,      4000, 67,  494.7,      989.4,
     989.4,   1978.9,   16,    128, kGh200Aliases, kHopper, 1980, 700, "NVLink 4", 450},
    // NVIDIA H800 SXM5 (the H100 SXM for export: the same GH100 die, clocks,
    // peaks, memory and 700 W; NVLink at 400 GB/s instead of 900).
    {"H800",
     "Hopper",
     "9.0",
     132,
     50 * kMiB,
     80,
     3350,
     67,
     494.7,
     989.4,
     989.4,
     1978.9,
     16,
     128,
     kH800Aliases,
     kHopper,
     1980,
     700,
     "NVLink 4 (H800)",
     200},
    // NVIDIA HGX B200 datasheet, per GPU: 75 FP32; sparse 2.2 PF TF32,
    // 4.5 PF FP16/BF16, 9 PF FP8, halved for dense; 180 GB HBM3e at 8 TB/s.
    // 148 SMs and 126 MB L2 as publicly reported from CUDA device properties;
    // neither figure is in the datasheet, nor is the boost clock (1965 MHz as
    // reported); 1000 W per GPU.
    {"B200", "Blackwell", "10.0", 148, 126 * kMiB,   180,        8000, 75,   1100,       2250,
     2250,   4500,        16,     128, kB200Aliases, kBlackwell, 1965, 1000, "NVLink 5", 900},
}};

}  // namespace

double GpuSpec::PeakTflops(DType dtype) const {
  switch (dtype) {
    case DType::kFp32:
      return peak_fp32;
    case DType::kTf32:
      return peak_tf32;
    case DType::kFp16:
      return peak_fp16;
    case DType::kBf16:
      return peak_bf16;
    case DType::kFp8E4M3:
      return peak_fp8;
  }
  return 0;
}

std::span<const GpuSpec> GpuCatalogue() { return kCatalogue; }

absl::StatusOr<const GpuSpec*> FindGpu(std::string_view name) {
  const auto match = [](std::string_view key) -> const GpuSpec* {
    for (const GpuSpec& gpu : kCatalogue) {
      if (internal::NormalizeName(gpu.name) == key) return &gpu;
      for (std::string_view alias : gpu.aliases) {
        if (internal::NormalizeName(alias) == key) return &gpu;
      }
    }
    return nullptr;
  };
  // The driver says "NVIDIA H100 80GB HBM3"; the catalogue says "H100…".
  const std::string key = internal::NormalizeName(name);
  constexpr std::string_view kVendor = "nvidia";
  const std::string_view model = key.starts_with(kVendor) && key.size() > kVendor.size()
                                     ? std::string_view(key).substr(kVendor.size())
                                     : std::string_view(key);
  if (const GpuSpec* gpu = match(model)) return gpu;
  if (const GpuSpec* gpu = match(key)) return gpu;
  std::vector<std::string_view> names;
  for (const GpuSpec& gpu : kCatalogue) names.push_back(gpu.name);
  return absl::NotFoundError(StrCat("gpu: unknown GPU '", name, "' (known: ", StrJoin(names, ", "),
                                    "; see `crest gpus`)"));
}

}  // namespace crest::tuner
