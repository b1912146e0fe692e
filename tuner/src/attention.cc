#include "crest/tuner/attention.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "crest/common/name_table.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"
#include "text.h"

namespace crest::tuner {
namespace {

// Shah et al. 2024, Fig. 5 (causal, BF16, forward, H100 80GB SXM5) [TFLOP/s]
// at sequence lengths 512, 1k, 2k, 4k, 8k, 16k; rows: head dim 64, 128, 256.
constexpr std::array<double, 6> kSeqs = {512, 1024, 2048, 4096, 8192, 16384};
constexpr std::array<double, 3> kHeadDims = {64, 128, 256};
constexpr double kFa3[3][6] = {
    {197, 265, 371, 420, 460, 473}, {292, 423, 521, 579, 602, 616}, {286, 427, 537, 612, 628, 642}};
constexpr double kFa2[3][6] = {
    {180, 229, 262, 284, 295, 299}, {191, 260, 298, 319, 333, 335}, {208, 251, 278, 293, 297, 298}};

// FlashAttention-2 on an A100 SXM against the H100 figure: its best on each,
// from its paper (Dao 2023): up to 73% of the A100's 312 TFLOP/s; up to 335
// TFLOP/s, the same code on an H100.
constexpr double kFa2A100OverH100 = 0.73 * 312 / 335;
// The 2022 Triton FlashAttention against FlashAttention-2 on the same GPU:
// about FlashAttention's CUDA kernel (flash_attn_triton.py's header), which
// FlashAttention-2 runs about 2x as fast as (its paper).
constexpr double kTritonOverFa2 = 0.5;

// Where x lies among `points` (ascending), in log2: the lower index and the
// fraction towards the next; held at the ends.
template <size_t N>
std::pair<size_t, double> Locate(const std::array<double, N>& points, double x) {
  const double lx = std::log2(std::clamp(x, points.front(), points.back()));
  for (size_t i = 0; i + 1 < N; ++i) {
    const double lo = std::log2(points[i]);
    const double hi = std::log2(points[i + 1]);
    if (lx <= hi) return {i, (lx - lo) / (hi - lo)};
  }
  return {N - 2, 1.0};
}

double Throughput(const double (*table)[6], double head_dim, double seq) {
  const auto [d, fd] = Locate(kHeadDims, head_dim);
  const auto [s, fs] = Locate(kSeqs, seq);
  const double lo = table[d][s] + fs * (table[d][s + 1] - table[d][s]);
  const double hi = table[d + 1][s] + fs * (table[d + 1][s + 1] - table[d + 1][s]);
  return lo + fd * (hi - lo);
}

// The figure a kernel's throughput starts from, and the GPU it describes
// (before the GEMM-rate scale to another GPU).
struct AttentionFigure {
  const double (*table)[6];
  double factor;         // of the table's figure
  std::string_view gpu;  // where the figure holds (catalogue name)
  std::string_view kernel;
  std::string_view why = "";  // the factor's, when it is not 1
};

AttentionFigure FigureFor(const GpuSpec& gpu, AttentionKernel kernel) {
  if (gpu.architecture == "Hopper" && kernel == AttentionKernel::kFused) {
    return {kFa3, 1.0, "h100", "FlashAttention-3"};
  }
  const bool ampere = gpu.architecture == "Ampere";
  AttentionFigure f{kFa2, 1.0, "h100", "FlashAttention-2"};
  if (ampere) {
    f = {kFa2, kFa2A100OverH100, "a100", "FlashAttention-2",
         "FlashAttention-2's best on an A100 over an H100, 73% of 312 against 335 TFLOP/s, "
         "Dao 2023"};
  }
  if (kernel == AttentionKernel::kFusedTriton) {
    f.factor *= kTritonOverFa2;
    f.kernel = "2022 Triton FlashAttention: half FlashAttention-2's";
    f.why = ampere ? "the A100's FlashAttention-2 figure, halved" : "FlashAttention-2's, halved";
  }
  return f;
}

constexpr NameTable<AttentionKernel, 4> kAttentionKernels = {
    {{AttentionKernel::kFused, "fused"},
     {AttentionKernel::kUnfused, "unfused"},
     {AttentionKernel::kFusedFa2, "fused-fa2"},
     {AttentionKernel::kFusedTriton, "fused-triton"}}};

}  // namespace

AttentionFlops FusedAttentionFlops(const ModelConfig& c) {
  const double d = static_cast<double>(c.HeadDim());
  const double s = static_cast<double>(c.seq);
  const double heads_per_rank = static_cast<double>(c.heads / c.tp);
  AttentionFlops f;
  f.fwd = 2.0 * static_cast<double>(c.micro_batch) * heads_per_rank * s * s * d;
  f.bwd = 2.5 * f.fwd;
  return f;
}

std::string_view AttentionKernelName(AttentionKernel k) { return NameOf(kAttentionKernels, k); }

std::optional<AttentionKernel> ParseAttentionKernel(std::string_view text) {
  return ValueNamed(kAttentionKernels, text);
}

double AttentionKernelError(AttentionKernel kernel) {
  if (kernel == AttentionKernel::kUnfused) return 0;
  return kFusedAttentionError + (kernel == AttentionKernel::kFusedTriton ? kTritonHalvingError : 0);
}

std::string AttentionFiguresNote(AttentionKernel kernel) {
  std::string_view which = "";
  if (kernel == AttentionKernel::kFusedFa2) {
    which = "-2 on every GPU, --attention fused-fa2";
  } else if (kernel == AttentionKernel::kFusedTriton) {
    which =
        " in 2022's Triton on every GPU, --attention fused-triton: half FlashAttention-2's "
        "throughput (flash_attn_triton.py's header: about FlashAttention's CUDA kernel, "
        "which FlashAttention-2 runs 2x as fast as)";
  }
  return StrCat("FlashAttention", which, ", causal), PREDICTED by ", kAttentionModelVersion,
                " from published H100 SXM throughput at the config's head dim and sequence "
                "(Shah et al. 2024, Fig. 5; FlashAttention-3 on Hopper, -2 elsewhere, scaled by "
                "the GPU's GEMM rate, from the A100's FlashAttention-2 figure for Ampere (Dao "
                "2023: 73% of 312 against 335 TFLOP/s on an H100); backward 2.5x the forward "
                "FLOPs at the same rate, assumed), expected error +/-",
                static_cast<int>(std::lround(100 * AttentionKernelError(kernel))), "%");
}

absl::StatusOr<FusedAttention> PredictFusedAttention(const ModelConfig& c, const GpuSpec& gpu,
                                                     AttentionKernel kernel) {
  if (auto s = ValidateModelConfig(c); !s.ok()) return s;
  const AttentionFigure figure = FigureFor(gpu, kernel);
  const GpuSpec& figure_gpu = **FindGpu(figure.gpu);
  const double measured_on = FastKernelTflops(figure_gpu, c.dtype);
  const double here = FastKernelTflops(gpu, c.dtype);
  if (measured_on <= 0 || here <= 0) {
    return absl::FailedPreconditionError(
        StrCat(DTypeName(c.dtype), " has no tensor-core path on ", gpu.name));
  }
  const double scale = here / measured_on;
  const double d = static_cast<double>(c.HeadDim());
  const double s = static_cast<double>(c.seq);
  FusedAttention a;
  a.tflops = Throughput(figure.table, d, s) * figure.factor * scale;
  const AttentionFlops flops = FusedAttentionFlops(c);
  a.fwd_flops = flops.fwd;
  a.bwd_flops = flops.bwd;
  a.basis = StrCat(
      "fused attention (", figure.kernel, " figures, causal, head dim ", c.HeadDim(), ", sequence ",
      c.seq, "): ", Decimals(a.tflops, 0), " TFLOP/s",
      figure.factor == 1.0
          ? ""
          : StrCat(" (x", Decimals(figure.factor, 3), " of the H100 figure: ", figure.why, ")"),
      scale == 1.0 ? "" : StrCat(" (x", Decimals(scale, 3), " of the ", figure_gpu.name, "'s)"));
  const std::string version(kAttentionModelVersion);
  const double error = AttentionKernelError(kernel);
  a.fwd = PredictedTiming(a.fwd_flops / (a.tflops * 1e6), error, version);
  a.bwd = PredictedTiming(a.bwd_flops / (a.tflops * 1e6), error, version);
  return a;
}

}  // namespace crest::tuner
