#include "crest/tuner/shapes.h"

#include <map>
#include <string>
#include <tuple>

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

using Mnk = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // batch, M, N, K

std::map<std::string, Mnk> ByName(const std::vector<GemmShape>& gemms) {
  std::map<std::string, Mnk> out;
  for (const auto& g : gemms) out[g.name] = {g.batch, g.m, g.n, g.k};
  return out;
}

ModelConfig Llama2_7B() {
  ModelConfig c;
  c.hidden = 4096;
  c.heads = 32;
  c.d_ff = 11008;
  c.vocab = 32000;
  c.seq = 4096;
  c.micro_batch = 1;
  return c;
}

TEST(TransformerGemms, Fp8TrainingRunsEveryGemmInTheOneLayoutFp8Has) {
  ModelConfig c = Llama2_7B();
  c.dtype = DType::kFp8E4M3;
  ShapeOptions train;
  train.include_backward = true;
  auto fp8 = TransformerGemms(c, train);
  ASSERT_TRUE(fp8.ok());
  auto bf16 = TransformerGemms(Llama2_7B(), train);
  ASSERT_TRUE(bf16.ok());
  ASSERT_EQ(fp8->size(), bf16->size());
  bool bf16_has_other_layouts = false;
  for (size_t i = 0; i < fp8->size(); ++i) {
    EXPECT_EQ((*fp8)[i].Layout(), kFp8Layout) << (*fp8)[i].name;
    EXPECT_EQ(ByName(*fp8)[(*fp8)[i].name], ByName(*bf16)[(*fp8)[i].name]) << "same M, N, K";
    bf16_has_other_layouts |= (*bf16)[i].Layout() != kFp8Layout;
  }
  EXPECT_TRUE(bf16_has_other_layouts) << "bf16 gradients keep NN and TN";
}

TEST(TransformerGemms, Llama2_7BForwardMatchesTheDesignTable) {
  auto gemms = TransformerGemms(Llama2_7B(), {});
  ASSERT_TRUE(gemms.ok()) << gemms.status();
  const auto got = ByName(*gemms);
  const std::map<std::string, Mnk> want = {
      {"qkv.fwd", {1, 4096, 12288, 4096}},         {"attn_score.fwd", {32, 4096, 4096, 128}},
      {"attn_value.fwd", {32, 4096, 128, 4096}},   {"attn_out.fwd", {1, 4096, 4096, 4096}},
      {"mlp_gate_up.fwd", {1, 4096, 22016, 4096}}, {"mlp_down.fwd", {1, 4096, 4096, 11008}},
      {"logits.fwd", {1, 4096, 32000, 4096}},
  };
  EXPECT_EQ(got, want);
  for (const auto& g : *gemms) EXPECT_EQ(g.pass, Pass::kFwd) << g.name;
}

TEST(TransformerGemms, TrainAddsDataAndWeightGradientsWithTheirLayouts) {
  ShapeOptions options;
  options.include_backward = true;
  auto gemms = TransformerGemms(Llama2_7B(), options);
  ASSERT_TRUE(gemms.ok());
  ASSERT_EQ(gemms->size(), 21u);
  const auto got = ByName(*gemms);
  // dX[M,K] = dY[M,N]·W: (M, K, N); dW[N,K] = dYᵀ·X: (N, K, M).
  EXPECT_EQ(got.at("mlp_down.dgrad"), Mnk(1, 4096, 11008, 4096));
  EXPECT_EQ(got.at("mlp_down.wgrad"), Mnk(1, 4096, 11008, 4096));
  EXPECT_EQ(got.at("mlp_gate_up.dgrad"), Mnk(1, 4096, 4096, 22016));
  EXPECT_EQ(got.at("mlp_gate_up.wgrad"), Mnk(1, 22016, 4096, 4096));
  EXPECT_EQ(got.at("logits.wgrad"), Mnk(1, 32000, 4096, 4096));
  EXPECT_EQ(got.at("attn_score.dgrad"), Mnk(32, 4096, 128, 4096));
  EXPECT_EQ(got.at("attn_value.dgrad"), Mnk(32, 4096, 4096, 128));
  for (const auto& g : *gemms) {
    if (g.name.starts_with("attn_score") || g.name.starts_with("attn_value")) continue;
    const char* want = g.pass == Pass::kFwd ? "NT" : g.pass == Pass::kDgrad ? "NN" : "TN";
    EXPECT_EQ(g.Layout(), want) << g.name;
  }
}

TEST(TransformerGemms, GqaAndTensorParallelDivideHeadsAndFeatures) {
  ModelConfig c;  // Llama-2-70B-like
  c.hidden = 8192;
  c.heads = 64;
  c.kv_heads = 8;
  c.d_ff = 28672;
  c.vocab = 32000;
  c.seq = 4096;
  c.micro_batch = 2;
  c.tp = 8;
  auto gemms = TransformerGemms(c, {});
  ASSERT_TRUE(gemms.ok()) << gemms.status();
  const auto got = ByName(*gemms);
  EXPECT_EQ(got.at("qkv.fwd"), Mnk(1, 8192, (64 + 2 * 8) * 128 / 8, 8192));
  EXPECT_EQ(got.at("attn_score.fwd"), Mnk(2 * 64 / 8, 4096, 4096, 128));
  EXPECT_EQ(got.at("attn_out.fwd"), Mnk(1, 8192, 8192, 64 * 128 / 8));
  EXPECT_EQ(got.at("mlp_gate_up.fwd"), Mnk(1, 8192, 2 * 28672 / 8, 8192));
  EXPECT_EQ(got.at("mlp_down.fwd"), Mnk(1, 8192, 8192, 28672 / 8));
  EXPECT_EQ(got.at("logits.fwd"), Mnk(1, 8192, 32000 / 8, 8192));
}

TEST(TransformerGemms, SeparateGateUpGivesTwoGemmsOfHalfWidth) {
  ShapeOptions options;
  options.fuse_gate_up = false;
  auto gemms = TransformerGemms(Llama2_7B(), options);
  ASSERT_TRUE(gemms.ok());
  const auto got = ByName(*gemms);
  EXPECT_FALSE(got.contains("mlp_gate_up.fwd"));
  EXPECT_EQ(got.at("mlp_gate.fwd"), Mnk(1, 4096, 11008, 4096));
  EXPECT_EQ(got.at("mlp_up.fwd"), Mnk(1, 4096, 11008, 4096));
}

struct Refusal {
  std::string what;
  ModelConfig config;
  std::string message;
};

void PrintTo(const Refusal& r, std::ostream* os) { *os << r.what; }

class RefusesBadConfig : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusesBadConfig, NamesTheFieldAndTheRule) {
  const auto result = TransformerGemms(GetParam().config, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result.status().message()), GetParam().message);
}

ModelConfig With(auto mutate) {
  ModelConfig c = Llama2_7B();
  mutate(c);
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Config, RefusesBadConfig,
    ::testing::Values(
        Refusal{"hidden_not_divisible", With([](auto& c) { c.hidden = 4095; }),
                "hidden (4095) must be divisible by heads (32)"},
        Refusal{"zero_hidden", With([](auto& c) { c.hidden = 0; }),
                "hidden must be positive (got 0)"},
        Refusal{"negative_seq", With([](auto& c) { c.seq = -1; }), "seq must be positive (got -1)"},
        Refusal{"huge_vocab", With([](auto& c) { c.vocab = int64_t{1} << 40; }),
                "vocab must be at most 8388608 (got 1099511627776)"},
        Refusal{"heads_not_divisible_by_kv", With([](auto& c) { c.kv_heads = 5; }),
                "heads (32) must be divisible by kv-heads (5)"},
        Refusal{"kv_more_than_heads", With([](auto& c) { c.kv_heads = 64; }),
                "kv-heads (64) must be at most heads (32)"},
        Refusal{"heads_not_divisible_by_tp", With([](auto& c) { c.tp = 3; }),
                "heads (32) must be divisible by tp (3)"},
        Refusal{"kv_not_divisible_by_tp", With([](auto& c) {
                  c.kv_heads = 4;
                  c.tp = 8;
                }),
                "kv-heads (4) must be divisible by tp (8)"},
        Refusal{"vocab_not_divisible_by_tp", With([](auto& c) {
                  c.vocab = 32001;
                  c.tp = 2;
                }),
                "vocab (32001) must be divisible by tp (2): pad it, e.g. to 32256 (a multiple of "
                "128*tp, as Megatron does); `crest vocab --vocab 32001 --tp 2` ranks the paddings"},
        Refusal{"dff_not_divisible_by_tp", With([](auto& c) {
                  c.d_ff = 11006;
                  c.tp = 4;
                }),
                "d-ff (11006) must be divisible by tp (4)"},
        Refusal{"too_many_tokens", With([](auto& c) {
                  c.micro_batch = 65536;
                  c.seq = 2048;
                }),
                "batch·seq (134217728 tokens) must be at most 16777216"}),
    [](const ::testing::TestParamInfo<Refusal>& p) { return p.param.what; });

TEST(MlpGemms, RefusesDffThatTpDoesNotDivide) {
  auto r = MlpGemms(8192, 4096, 10922, 4, DType::kBf16, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "d-ff (10922) must be divisible by tp (4)");
}

TEST(MlpGemms, TheCountIsHowManyItGivesForEveryShape) {
  for (MlpKind mlp : {MlpKind::kSwiGlu, MlpKind::kGelu}) {
    for (bool fused : {false, true}) {
      for (bool backward : {false, true}) {
        ShapeOptions options;
        options.mlp = mlp;
        options.fuse_gate_up = fused;
        options.include_backward = backward;
        auto gemms = MlpGemms(8192, 4096, 10944, 1, DType::kBf16, options);
        ASSERT_TRUE(gemms.ok());
        EXPECT_EQ(MlpGemmCount(options), static_cast<int64_t>(gemms->size()));
      }
    }
  }
}

}  // namespace
}  // namespace crest::tuner
