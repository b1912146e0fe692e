#include "crest/tuner/calibration_transfer.h"

#include <cmath>
#include <fstream>

#include "crest/tuner/predictor.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

using crest::testing::Gemm;

// The audit: "crest explain --m 8192 --n 4096 --k 10816 --gpu h200 predicts
// 563 TFLOP/s against 724 on the H100", for the same die at the same clocks
// and power, which measured within ±3% of the H100.
TEST(CalibrationTransfer, TheH200BorrowsTheH100sCalibrationAtTheSameRates) {
  const auto h200 = ActiveCalibration("H200", DType::kBf16);
  const auto h100 = ActiveCalibration("H100-SXM", DType::kBf16);
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(h200, nullptr) << "the H200 ran on uncalibrated defaults";
  EXPECT_EQ(h200->transferred_from, h100->id);
  EXPECT_EQ(h200->model_version, "tilewave-2+h200-bf16-from-" + h100->id);
  EXPECT_EQ(h200->label.rfind("transferred to H200 from H100-SXM's calibration", 0), 0u)
      << h200->label;
  EXPECT_NEAR(h200->params.expected_error[0], h100->params.expected_error[0] + kSameDieError,
              1e-12);
  for (const GemmShape& g : {Gemm(8192, 4096, 10816), Gemm(8192, 21632, 4096)}) {
    auto on_h100 = Predict(g, **FindGpu("h100"));
    auto on_h200 = Predict(g, **FindGpu("h200"));
    ASSERT_TRUE(on_h100.ok() && on_h200.ok());
    EXPECT_NEAR(on_h200->time_us / on_h100->time_us, 1.0, 0.01) << g.k;
    EXPECT_EQ(on_h200->model_version, h200->model_version);
  }
}

TEST(CalibrationTransfer, AGpuWithFewerSmsAndLessPowerPerSmIsScaledByBoth) {
  const GpuSpec& sxm = **FindGpu("h100");
  const GpuSpec& pcie = **FindGpu("h100-pcie");
  const auto t = TransferBetween(sxm, sxm.model, pcie);
  EXPECT_NEAR(t.source_clock_mhz, 1980 * 0.735, 1e-9);
  // 350 W over 114 SMs against 700 over 132: the cube root of 0.579.
  EXPECT_NEAR(t.target_clock_mhz, t.source_clock_mhz * std::cbrt((350.0 / 114) / (700.0 / 132)),
              1e-9);
  EXPECT_NEAR(t.rate_scale, 114 * t.target_clock_mhz / (132 * t.source_clock_mhz), 1e-12);
  EXPECT_LT(t.rate_scale, 0.76) << "below the datasheet peaks' ratio (756/989): power-capped";
  EXPECT_GT(t.rate_scale, 0.6);
  EXPECT_EQ(t.added_error, kOtherPowerError);
  const auto c = ActiveCalibration("H100-PCIe", DType::kBf16);
  ASSERT_NE(c, nullptr);
  const auto from = ActiveCalibration("H100-SXM", DType::kBf16);
  EXPECT_NEAR(c->params.fast_tflops, from->params.fast_tflops * t.rate_scale, 1e-9);
  EXPECT_NEAR(c->params.fallback_tflops, from->params.fallback_tflops * t.rate_scale, 1e-9);
  EXPECT_EQ(c->params.fast_align, from->params.fast_align) << "the kernels are the same";
}

TEST(CalibrationTransfer, OnlyAnArchitecturesSiblingsBorrowAndAGpusOwnCalibrationWins) {
  EXPECT_EQ(ActiveCalibration("A100-SXM-80GB", DType::kBf16), nullptr) << "no Ampere calibration";
  EXPECT_EQ(ActiveCalibration("B200", DType::kBf16), nullptr) << "Blackwell is not Hopper";
  EXPECT_EQ(ActiveCalibration("H200", DType::kFp8E4M3), nullptr) << "nothing to borrow for fp8";
  EXPECT_EQ(CalibrationState(**FindGpu("h200")).rfind("transferred (bf16, fp16) from h100-sxm-", 0),
            0u)
      << CalibrationState(**FindGpu("h200"));

  // A calibration fitted on the GH200 itself replaces the borrowed one.
  Calibration own = *ActiveCalibration("H100-SXM", DType::kFp16);
  own.gpu = "GH200";
  own.provenance.device = "NVIDIA GH200 480GB";
  own.params.fast_tflops *= 1.05;
  own.transferred_from.clear();
  NameCalibration(own);
  const std::string path = ::testing::TempDir() + "/gh200-fp16.json";
  std::ofstream(path) << CalibrationJson(own);
  ASSERT_TRUE(LoadCalibrationFile(path).ok());
  const auto active = ActiveCalibration("GH200", DType::kFp16);
  ASSERT_NE(active, nullptr);
  EXPECT_TRUE(active->transferred_from.empty());
  EXPECT_EQ(active->id, own.id);
}

}  // namespace
}  // namespace crest::tuner
