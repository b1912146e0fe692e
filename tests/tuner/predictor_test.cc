#include "crest/tuner/predictor.h"

#include "crest/tuner/calibration_fit.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

using crest::testing::Gemm;

const TileEstimate& Tile(const Prediction& p, int tm, int tn) {
  for (const auto& e : p.tiles) {
    if (e.tile.m == tm && e.tile.n == tn) return e;
  }
  ADD_FAILURE() << "no tile " << tm << "x" << tn;
  return p.tiles[0];
}

// NVIDIA's matrix-multiplication guide: A100, M=2304, K=4096, 256×128 tiles:
// N=1536 gives 108 tiles, exactly one wave on 108 SMs; N=1544 spills.
TEST(Predict, A100WaveExampleFillsOneWaveThenSpills) {
  const GpuSpec& a100 = **FindGpu("a100");
  auto full = Predict(Gemm(2304, 1536, 4096, DType::kFp16), a100);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(Tile(*full, 256, 128).tiles, 108);
  EXPECT_EQ(Tile(*full, 256, 128).waves, 1);
  EXPECT_DOUBLE_EQ(Tile(*full, 256, 128).wave_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(Tile(*full, 256, 128).tile_efficiency, 1.0);

  auto spill = Predict(Gemm(2304, 1544, 4096, DType::kFp16), a100);
  ASSERT_TRUE(spill.ok());
  EXPECT_EQ(Tile(*spill, 256, 128).tiles, 9 * 13);
  EXPECT_EQ(Tile(*spill, 256, 128).waves, 2);
  EXPECT_NEAR(Tile(*spill, 256, 128).wave_efficiency, 117.0 / 216.0, 1e-12);
  EXPECT_NEAR(Tile(*spill, 256, 128).tile_efficiency, 1544.0 / (13 * 128), 1e-12);
  // Eight more columns cost far more than their 0.5% of FLOPs.
  EXPECT_GT(spill->time_us, full->time_us * 1.2);
}

TEST(Predict, PicksTheFastestTileAndReportsIt) {
  auto p = Predict(Gemm(8192, 8192, 8192), **FindGpu("a100"));
  ASSERT_TRUE(p.ok());
  for (const auto& e : p->tiles) EXPECT_LE(p->best.time_us, e.time_us);
  EXPECT_DOUBLE_EQ(p->time_us, p->best.time_us);
  EXPECT_FALSE(p->memory_bound);
  EXPECT_GT(p->tflops, 0.5 * 312);
  EXPECT_LT(p->tflops, 312);
  EXPECT_EQ(p->model_version, kPredictorVersion) << "the A100 runs on uncalibrated defaults";
  EXPECT_EQ(p->calibration, "uncalibrated Ampere defaults");
  EXPECT_DOUBLE_EQ(p->expected_error, 0.25);
}

TEST(Predict, MisalignedContiguousDimensionFallsBackToTheSlowerFamily) {
  const GpuSpec& h100 = **FindGpu("h100");
  const ModelParams& p = h100.model;  // the defaults, whatever is calibrated
  // mlp_down with d_ff = 10922: K·2 bytes = 21844, only 4-byte aligned.
  auto bad = PredictWith(Gemm(8192, 4096, 10922), h100, p);
  auto good = PredictWith(Gemm(8192, 4096, 11008), h100, p);
  ASSERT_TRUE(bad.ok() && good.ok());
  EXPECT_EQ(bad->a.alignment, 4);
  EXPECT_EQ(bad->family, KernelFamily::kFallback);
  // Both inputs at 4 bytes: the per-input factor twice.
  EXPECT_DOUBLE_EQ(bad->alignment_factor, p.fallback_input[1] * p.fallback_input[1]);
  EXPECT_EQ(good->a.alignment, 128);
  EXPECT_EQ(good->family, KernelFamily::kFast);
  EXPECT_DOUBLE_EQ(good->alignment_factor, 1.0);
  EXPECT_GT(good->tflops, 1.5 * bad->tflops);
}

TEST(Predict, TheKResidueFactorAppliesOnlyWithBothInputsAlongAMisalignedK) {
  const GpuSpec& h100 = **FindGpu("h100");
  ModelParams p = h100.model;
  p.fallback_k_residue[10922 % kKResiduePeriod] = 1.25;       // K = 10922: residue 42
  p.fallback_k_residue[10923 % kKResiduePeriod] = 0.8;        // the neighbour: residue 43
  auto down = PredictWith(Gemm(8192, 4096, 10922), h100, p);  // NT: A and B along K
  auto plain = PredictWith(Gemm(8192, 4096, 10922), h100, h100.model);
  ASSERT_TRUE(down.ok() && plain.ok());
  EXPECT_EQ(down->k_residue, 42);
  EXPECT_DOUBLE_EQ(down->k_residue_factor, 1.25);
  EXPECT_DOUBLE_EQ(down->alignment_factor, 1.25 * plain->alignment_factor);
  EXPECT_LT(down->time_us, plain->time_us);
  auto neighbour = PredictWith(Gemm(8192, 4096, 10923), h100, p);
  ASSERT_TRUE(neighbour.ok());
  EXPECT_DOUBLE_EQ(neighbour->k_residue_factor, 0.8);
  // NN: B runs along N, so K's residue says nothing about this kernel.
  GemmShape nn = Gemm(8192, 10922, 4096);
  nn.b_transposed = false;
  auto other = PredictWith(nn, h100, p);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->family, KernelFamily::kFallback);
  EXPECT_DOUBLE_EQ(other->k_residue_factor, 1.0);
  // An aligned K never takes a residue factor, whatever the table holds.
  p.fallback_k_residue[11008 % kKResiduePeriod] = 3.0;
  auto aligned = PredictWith(Gemm(8192, 4096, 11008), h100, p);
  ASSERT_TRUE(aligned.ok());
  EXPECT_DOUBLE_EQ(aligned->k_residue_factor, 1.0);
  EXPECT_DOUBLE_EQ(aligned->alignment_factor, 1.0);
}

TEST(Predict, OnlyCMisalignedStillFallsBackButInputsKeepFullRate) {
  const GpuSpec& h100 = **FindGpu("h100");
  // mlp_gate_up with d_ff = 10922: N = 21844, C rows 43688 B: 8-byte aligned.
  auto p = PredictWith(Gemm(8192, 21844, 4096), h100, h100.model);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->family, KernelFamily::kFallback);
  EXPECT_EQ(p->c.alignment, 8);
  EXPECT_DOUBLE_EQ(p->alignment_factor, 1.0);
  EXPECT_DOUBLE_EQ(p->family_tflops, h100.PeakTflops(DType::kBf16) * h100.model.compute_efficiency *
                                         h100.model.sustained_clock_ratio *
                                         h100.model.fallback_ratio);
}

TEST(Predict, LargerAlignmentMultiplesDoNoWorse) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto a16 = PredictWith(Gemm(8192, 4096, 10952), h100, h100.model);  // 21904 B: 16-byte aligned
  auto a128 = PredictWith(Gemm(8192, 4096, 11008), h100, h100.model);
  ASSERT_TRUE(a16.ok() && a128.ok());
  EXPECT_EQ(a16->a.alignment, 16);
  EXPECT_EQ(a16->family, KernelFamily::kFast);
  EXPECT_DOUBLE_EQ(a16->alignment_factor, h100.model.fast_align[0]);
  EXPECT_LE(a16->alignment_factor, a128->alignment_factor);
}

TEST(Predict, TheSustainedRateNotTheBoostPeak) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto p = PredictWith(Gemm(8192, 8192, 8192), h100, h100.model);
  ASSERT_TRUE(p.ok());
  // The power-capped clock (1455 of 1980 MHz on the recorded H100) caps the rate.
  EXPECT_LT(p->family_tflops, 0.8 * 989.4);
  EXPECT_NEAR(p->family_tflops, 989.4 * 0.8 * 0.735, 1e-9);
}

TEST(Predict, LayoutDecidesWhichDimensionMustAlign) {
  const GpuSpec& h100 = **FindGpu("h100");
  GemmShape wgrad = Gemm(4096, 4096, 8190);  // K misaligned
  wgrad.a_transposed = true;                 // "TN": A contiguous along M,
  wgrad.b_transposed = false;                //       B along N
  auto p = Predict(wgrad, h100);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->a.elements, 4096);
  EXPECT_EQ(p->b.elements, 4096);
  EXPECT_DOUBLE_EQ(p->alignment_factor, 1.0);
}

TEST(Predict, TheIntervalIsTheErrorOfTheGemmsLayoutKernelAndAlignment) {
  const GpuSpec& h100 = **FindGpu("h100");
  ModelParams params = ExplicitRates(h100.model, h100, DType::kBf16);
  for (size_t i = 0; i < kErrorClasses.size(); ++i)
    params.expected_error[i] = 0.01 * static_cast<double>(i + 1);
  const auto error = [&](const GemmShape& g) {
    return PredictWith(g, h100, params)->expected_error;
  };
  EXPECT_DOUBLE_EQ(error(Gemm(8192, 4096, 4096)), 0.04) << "nt.fast.128";
  EXPECT_DOUBLE_EQ(error(Gemm(8192, 4096, 10824)), 0.01) << "nt.fast.16: K a multiple of 8 only";
  EXPECT_DOUBLE_EQ(error(Gemm(8192, 4096, 10832)), 0.02) << "nt.fast.32";
  EXPECT_DOUBLE_EQ(error(Gemm(8192, 4096, 10923)), 0.05) << "nt.fallback";
  GemmShape dgrad = Gemm(8192, 4096, 4096);
  dgrad.b_transposed = false;  // NN
  EXPECT_DOUBLE_EQ(error(dgrad), 0.09) << "other.fast.128";
  dgrad.n = 10923;
  EXPECT_DOUBLE_EQ(error(dgrad), 0.10) << "other.fallback";
}

TEST(Predict, SkinnyGemmIsMemoryBound) {
  auto p = Predict(Gemm(1, 16384, 16384), **FindGpu("h100"));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->memory_bound);
  const double bytes = 16384.0 * 16384 * 2;
  EXPECT_GT(p->time_us, bytes / 3.35e12 * 1e6 * 0.99);
}

TEST(Predict, BatchMultipliesTilesAndTime) {
  const GpuSpec& h100 = **FindGpu("h100");
  auto one = Predict(Gemm(4096, 4096, 4096, DType::kFp16, 1), h100);
  auto four = Predict(Gemm(4096, 4096, 4096, DType::kFp16, 4), h100);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(Tile(*four, 128, 128).tiles, 4 * Tile(*one, 128, 128).tiles);
  EXPECT_GT(four->time_us, 3 * one->time_us);
}

TEST(Predict, RefusesBadSizesAndMissingPaths) {
  const GpuSpec& h100 = **FindGpu("h100");
  EXPECT_EQ(std::string(Predict(Gemm(0, 1, 1), h100).status().message()),
            "m must be positive (got 0)");
  EXPECT_EQ(std::string(Predict(Gemm(1, 1, int64_t{1} << 30), h100).status().message()),
            "k must be at most 16777216 (got 1073741824)");
  EXPECT_EQ(std::string(Predict(Gemm(1, 1, 1, DType::kBf16, 0), h100).status().message()),
            "batch must be positive (got 0)");
  EXPECT_EQ(std::string(Predict(Gemm(64, 64, 64), **FindGpu("v100")).status().message()),
            "dtype: V100 has no dense bf16 path");
  const auto huge = Predict(Gemm(1 << 24, 1 << 24, 1 << 24), h100);
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(std::string(huge.status().message()).starts_with("batch·m·n·k: one operand"))
      << huge.status();
}

}  // namespace
}  // namespace crest::tuner
