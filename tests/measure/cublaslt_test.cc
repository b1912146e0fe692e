// The cuBLASLt engine on a real device. Every test skips, saying why, where
// there is no CUDA device; CI has none, so these run on GPU machines only
// (scripts/gpu-check.sh).
#include <cmath>

#include "crest/measure/cuda_backend.h"
#include "gtest/gtest.h"

namespace crest::measure {
namespace {

#define SKIP_WITHOUT_DEVICE()                                      \
  do {                                                             \
    auto devices = ProbeDevices();                                 \
    if (!devices.ok()) GTEST_SKIP() << devices.status().message(); \
  } while (0)

std::unique_ptr<Backend> Engine() {
  CublasLtOptions options;
  options.top_k = 4;
  options.warmup_seconds = 0.2;
  options.stopping.max_seconds = 0.2;
  auto backend = MakeCublasLtBackend(options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

GemmShape Gemm(int64_t m, int64_t n, int64_t k, DType dtype, const char* layout,
               int64_t batch = 1) {
  GemmShape g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.dtype = dtype;
  ParseLayout(layout, &g.a_transposed, &g.b_transposed);
  return g;
}

TEST(CublasLt, ProbeReportsTheDeviceAndSoftware) {
  SKIP_WITHOUT_DEVICE();
  auto devices = ProbeDevices();
  ASSERT_FALSE(devices->empty());
  const auto& d = devices->front();
  EXPECT_GT(d.device.sm_count, 0);
  EXPECT_TRUE(d.device.uuid.starts_with("GPU-")) << d.device.uuid;
  EXPECT_GT(d.software.cublaslt, 0);
  EXPECT_GT(d.software.cuda_runtime, 0);
}

class EveryDtypeAndLayout : public testing::TestWithParam<std::tuple<DType, const char*>> {};

TEST_P(EveryDtypeAndLayout, BestAlgorithmIsVerifiedAndMeasured) {
  SKIP_WITHOUT_DEVICE();
  const auto [dtype, layout] = GetParam();
  if (dtype == DType::kFp8E4M3 && std::string(layout) != "NT") GTEST_SKIP() << "fp8 is NT only";
  auto engine = Engine();
  ASSERT_NE(engine, nullptr);
  auto out = engine->Run(Gemm(1024, 768, 512, dtype, layout));
  if (dtype == DType::kFp8E4M3 && !out.ok()) GTEST_SKIP() << out.status().message();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->measured.has_value());
  EXPECT_FALSE(out->predicted.has_value());
  int verified = 0;
  for (const auto& a : out->measured->algos) {
    verified += a.verified;
    EXPECT_GT(a.stats.samples, 0);
    EXPECT_GT(a.stats.median_us, 0);
    EXPECT_FALSE(a.algo.bytes.empty());
  }
  EXPECT_GT(verified, 0) << "no algorithm produced a correct result";
}

INSTANTIATE_TEST_SUITE_P(Engine, EveryDtypeAndLayout,
                         testing::Combine(testing::Values(DType::kFp32, DType::kTf32, DType::kFp16,
                                                          DType::kBf16, DType::kFp8E4M3),
                                          testing::Values("NT", "NN", "TN")),
                         [](const testing::TestParamInfo<std::tuple<DType, const char*>>& p) {
                           return std::string(DTypeName(std::get<0>(p.param))) + "_" +
                                  std::get<1>(p.param);
                         });

TEST(CublasLt, StridedBatchedAttentionShapeIsVerified) {
  SKIP_WITHOUT_DEVICE();
  auto engine = Engine();
  auto out = engine->Run(Gemm(512, 512, 128, DType::kBf16, "NT", 16));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->measured->algos.front().verified);
}

TEST(CublasLt, RepeatedMeasurementsAgreeWithinFivePercent) {
  SKIP_WITHOUT_DEVICE();
  auto engine = Engine();
  const GemmShape g = Gemm(4096, 4096, 4096, DType::kBf16, "NT");
  auto best = [&]() {
    auto out = engine->Run(g);
    EXPECT_TRUE(out.ok()) << out.status();
    double t = INFINITY;
    for (const auto& a : out->measured->algos) {
      if (a.verified) t = std::min(t, a.stats.median_us);
    }
    return t;
  };
  const double first = best();
  const double second = best();
  EXPECT_LT(std::abs(first - second) / first, 0.05) << first << " vs " << second;
}

TEST(CublasLt, RefusesAShapeThatCannotFitBeforeAllocating) {
  SKIP_WITHOUT_DEVICE();
  auto engine = Engine();
  auto out = engine->Run(Gemm(1 << 20, 1 << 20, 1 << 16, DType::kBf16, "NT"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
}

}  // namespace
}  // namespace crest::measure
