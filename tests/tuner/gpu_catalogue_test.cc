#include "crest/tuner/gpu_catalogue.h"

#include <string>

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

TEST(GpuCatalogue, HoldsEveryGpuTheIssueNames) {
  for (const char* name :
       {"V100", "A100-SXM-40GB", "A100-SXM-80GB", "A100-PCIe", "A10", "L4", "L40S", "RTX-4090",
        "H100-SXM", "H100-PCIe", "H200", "GH200", "H800", "B200"}) {
    auto gpu = FindGpu(name);
    ASSERT_TRUE(gpu.ok()) << name;
    EXPECT_EQ((*gpu)->name, name);
    EXPECT_GT((*gpu)->sm_count, 0) << name;
    EXPECT_GT((*gpu)->l2_bytes, 0) << name;
    EXPECT_GT((*gpu)->memory_bandwidth_gbs, 0) << name;
    EXPECT_GT((*gpu)->peak_fp32, 0) << name;
    EXPECT_GT((*gpu)->peak_fp16, (*gpu)->peak_fp32) << name;
    EXPECT_GT((*gpu)->boost_clock_mhz, 0) << name;
    EXPECT_GT((*gpu)->power_w, 0) << name;
  }
}

TEST(GpuCatalogue, MatchesCaseInsensitivelyWithAliases) {
  EXPECT_EQ((*FindGpu("h100"))->name, "H100-SXM");
  EXPECT_EQ((*FindGpu("H100_sxm"))->name, "H100-SXM");
  EXPECT_EQ((*FindGpu("NVIDIA H100 80GB HBM3"))->name, "H100-SXM");
  EXPECT_EQ((*FindGpu("a100"))->name, "A100-SXM-80GB");
  EXPECT_EQ((*FindGpu("rtx 4090"))->name, "RTX-4090");
  EXPECT_EQ((*FindGpu("NVIDIA H200"))->name, "H200");
}

TEST(GpuCatalogue, UnknownNameListsTheKnownOnes) {
  auto gpu = FindGpu("h300");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kNotFound);
  const std::string message(gpu.status().message());
  EXPECT_NE(message.find("unknown GPU 'h300'"), std::string::npos);
  EXPECT_NE(message.find("H100-SXM"), std::string::npos);
}

TEST(GpuCatalogue, MissingPathsAreZeroNotInvented) {
  const GpuSpec& v100 = **FindGpu("v100");
  EXPECT_EQ(v100.PeakTflops(DType::kBf16), 0);
  EXPECT_EQ(v100.PeakTflops(DType::kTf32), 0);
  EXPECT_EQ((*FindGpu("a100"))->PeakTflops(DType::kFp8E4M3), 0);
  EXPECT_GT((*FindGpu("h100"))->PeakTflops(DType::kFp8E4M3), 0);
}

TEST(GpuCatalogue, NamesAndAliasesAreUnambiguous) {
  for (const GpuSpec& gpu : GpuCatalogue()) {
    EXPECT_EQ((*FindGpu(gpu.name))->name, gpu.name);
    for (auto alias : gpu.aliases) EXPECT_EQ((*FindGpu(alias))->name, gpu.name) << alias;
  }
}

}  // namespace
}  // namespace crest::tuner
