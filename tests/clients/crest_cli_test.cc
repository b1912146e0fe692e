// End-to-end tests of the `crest` binary: flags, exit codes, messages, JSON.
#include "crest_cli.h"

#include <string>

#include "crest/tuner/defaults.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"

namespace crest {
namespace {

using crest::testing::CommandResult;
using crest::testing::Crest;
using crest::testing::Json;
using crest::testing::RunCommand;

TEST(CrestDff, DefaultRankingIsPredictedAndBestFirst) {
  const auto doc = Json(Crest("dff --hidden 4096 --gpu h100 --json"));
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["gpu"], "H100-SXM");
  EXPECT_EQ(doc["hidden"], 4096);
  EXPECT_EQ(doc["ratio"], "8/3");
  EXPECT_EQ(doc["tokens"], 8192);
  EXPECT_EQ(doc["baseline"]["d_ff"], 10922);
  EXPECT_EQ(doc["baseline"]["mlp_params"], 3 * 4096 * 10922);
  EXPECT_EQ(doc["evaluated"], 257);
  const auto& rows = doc["candidates"];
  ASSERT_EQ(rows.size(), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["source"], "predicted");
    for (const char* key :
         {"d_ff", "time_us", "tflops", "speedup_vs_baseline", "mlp_params", "params_delta"}) {
      EXPECT_TRUE(rows[i].contains(key)) << key;
    }
    if (i > 0) {
      EXPECT_LE(rows[i - 1]["time_us"].get<double>(), rows[i]["time_us"].get<double>());
    }
  }
}

TEST(CrestDff, HumanTableSaysPredicted) {
  const auto r = Crest("dff --hidden 4096 --gpu h100 --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("answered by: this build's model, predicted by tilewave-2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("not measured"), std::string::npos);
  EXPECT_NE(r.out.find("floor(8/3*4096) = 10922"), std::string::npos);
}

TEST(CrestDff, TrainAndTpChangeTheQuery) {
  const auto doc =
      Json(Crest("dff --hidden 4096 --gpu h100 --pass train --tp 2 --align 64 --json"));
  EXPECT_EQ(doc["pass"], "train");
  EXPECT_EQ(doc["tp"], 2);
  for (const auto& row : doc["candidates"]) {
    const auto d_ff = row["d_ff"].get<int64_t>();
    EXPECT_TRUE(d_ff % 64 == 0 || d_ff == 10922) << d_ff;
  }
}

TEST(CrestExplain, JsonCarriesTheBreakdown) {
  const auto doc = Json(Crest("explain --m 2304 --n 1536 --k 4096 --gpu a100 --dtype fp16 --json"));
  for (const char* key : {"time_us", "tflops", "tile", "tiles", "waves", "tile_efficiency",
                          "wave_efficiency", "source", "model_version"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["source"], "predicted");
  EXPECT_EQ(doc["tiles"], 108);
  EXPECT_EQ(doc["waves"], 1);
  EXPECT_EQ(doc["tile"]["m"], 256);
  EXPECT_EQ(doc["tile"]["n"], 128);
}

TEST(CrestShapes, JsonListsEveryGemm) {
  const std::string model = "shapes --hidden 4096 --heads 32 --d-ff 11008 --vocab 32000 --seq 4096";
  const auto doc = Json(Crest(model + " --attention unfused --json"));
  ASSERT_EQ(doc["gemms"].size(), 7u);
  EXPECT_EQ(doc["gemms"][0]["name"], "qkv.fwd");
  for (const char* key : {"name", "pass", "batch", "m", "n", "k", "flops"}) {
    EXPECT_TRUE(doc["gemms"][0].contains(key)) << key;
  }
  EXPECT_EQ(doc["attention"]["kernel"], "unfused");
  const auto train = Json(Crest(model + " --attention unfused --pass train --json"));
  EXPECT_EQ(train["gemms"].size(), 21u);
}

TEST(CrestShapes, TheAttentionCoreIsOneFusedCausalKernelByDefault) {
  const std::string model = "shapes --hidden 4096 --heads 32 --d-ff 11008 --vocab 32000 --seq 4096";
  const auto fused = Json(Crest(model + " --json"));
  const auto unfused = Json(Crest(model + " --attention unfused --json"));
  // The two batched GEMMs leave the list; the fused kernel does the causal
  // half of their FLOPs and the total says so.
  ASSERT_EQ(fused["gemms"].size(), 5u);
  for (const auto& g : fused["gemms"]) {
    EXPECT_FALSE(g["name"].get<std::string>().starts_with("attn_score")) << g;
    EXPECT_FALSE(g["name"].get<std::string>().starts_with("attn_value")) << g;
  }
  double core_unfused = 0;
  for (const auto& g : unfused["gemms"]) {
    const std::string name = g["name"];
    if (name.starts_with("attn_score") || name.starts_with("attn_value")) {
      core_unfused += g["flops"].get<double>();
    }
  }
  EXPECT_EQ(fused["attention"]["kernel"], "fused");
  EXPECT_DOUBLE_EQ(fused["attention"]["fwd_flops"].get<double>(), core_unfused / 2);
  EXPECT_DOUBLE_EQ(fused["layer_flops"].get<double>(),
                   unfused["layer_flops"].get<double>() - core_unfused / 2);
  const auto train = Json(Crest(model + " --pass train --json"));
  EXPECT_DOUBLE_EQ(train["attention"]["bwd_flops"].get<double>(),
                   2.5 * train["attention"]["fwd_flops"].get<double>());
  const auto table = Crest(model + " --pass train").out;
  EXPECT_NE(table.find("attention.fwd"), std::string::npos) << table;
  EXPECT_NE(table.find("attention.bwd"), std::string::npos) << table;
  EXPECT_NE(table.find("fused FlashAttention kernel"), std::string::npos) << table;
  auto bad = Crest(model + " --attention flash");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--attention"), std::string::npos) << bad.err;
}

TEST(CrestGpus, ListsTheCatalogue) {
  const auto doc = Json(Crest("gpus --json"));
  EXPECT_GE(doc["gpus"].size(), 13u);
  const auto table = Crest("gpus");
  EXPECT_NE(table.out.find("H100-SXM"), std::string::npos);
}

struct BadInput {
  std::string name;
  std::string args;
  std::string message;  // must appear in stderr
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class CrestRefuses : public ::testing::TestWithParam<BadInput> {};

TEST_P(CrestRefuses, WithExitCode2AndAMessageNamingTheField) {
  const auto r = Crest(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, CrestRefuses,
    ::testing::Values(
        BadInput{"unknown_gpu", "dff --hidden 4096 --gpu h300", "unknown GPU 'h300'"},
        BadInput{"bad_ratio", "dff --hidden 4096 --gpu h100 --ratio 8/0", "ratio: '8/0'"},
        BadInput{"zero_hidden", "dff --hidden 0 --gpu h100", "hidden must be positive"},
        BadInput{"bad_pass", "dff --hidden 4096 --gpu h100 --pass back", "pass: 'back'"},
        BadInput{"bad_dtype", "explain --m 1 --n 1 --k 1 --gpu h100 --dtype int4",
                 "dtype: unknown type 'int4'"},
        BadInput{"no_bf16_on_v100", "explain --m 64 --n 64 --k 64 --gpu v100",
                 "V100 has no dense bf16 path"},
        BadInput{"huge_k", "explain --m 1 --n 1 --k 99999999999 --gpu h100", "k must be at most"},
        BadInput{"bad_layout", "explain --m 1 --n 1 --k 1 --gpu h100 --layout XY", "layout: 'XY'"},
        BadInput{"heads_do_not_divide",
                 "shapes --hidden 4095 --heads 32 --d-ff 11008 --vocab 32000 --seq 4096",
                 "hidden (4095) must be divisible by heads (32)"},
        BadInput{"missing_required", "dff --gpu h100", "--hidden is required"},
        BadInput{"not_a_number", "dff --hidden lots --gpu h100", "--hidden"},
        BadInput{"no_command", "", "A subcommand is required"}),
    [](const ::testing::TestParamInfo<BadInput>& p) { return p.param.name; });

TEST(Crest, HelpAndVersionExitZero) {
  EXPECT_EQ(Crest("--help").exit_code, 0);
  EXPECT_EQ(Crest("dff --help").exit_code, 0);
  const auto v = Crest("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("predictor: tilewave-2"), std::string::npos);
}

// `crest dff` with only the required flags asks the default question of
// defaults.h (its JSON echoes the query).
TEST(CrestDefaults, TheFlagsDefaultsAreTheOnesEveryQuestionShares) {
  const auto doc = Json(Crest("--json dff --hidden 4096 --gpu h100 --top 1"));
  EXPECT_EQ(doc["ratio"], std::string(tuner::kDefaultRatio));
  EXPECT_EQ(doc["window"], tuner::kDefaultWindow);
  EXPECT_EQ(doc["align"], tuner::kDefaultAlign);
  EXPECT_EQ(doc["tokens"], tuner::kDefaultTokens);
  EXPECT_EQ(doc["tp"], tuner::kDefaultTp);
  EXPECT_EQ(doc["dtype"], std::string(tuner::kDefaultDtype));
  EXPECT_EQ(doc["pass"], std::string(tuner::kDefaultPass));
  const auto vocab = Json(Crest("--json vocab --vocab 32000 --hidden 4096 --gpu h100"));
  EXPECT_EQ(vocab["tokens"], tuner::kDefaultTokens);
  const auto top = Json(Crest("--json dff --hidden 4096 --gpu h100"));
  EXPECT_EQ(top["candidates"].size(), static_cast<size_t>(tuner::kDefaultTop));
}

// The headline names the rows tied with it that the table shows, and says
// how to see them all when --top hides every one.
TEST(CrestDff, TheHeadlineSaysHowToSeeTiedRowsTheTableHides) {
  const auto doc = Json(Crest("--json dff --hidden 4096 --gpu h100 --top 0"));
  const int tied = doc["headline"]["tied_with_it"].get<int>();
  ASSERT_GT(tied, 3) << "the model's interval ties more than the table below shows";
  const std::string count = "tied with it: " + std::to_string(tied);
  const auto one = Crest("dff --hidden 4096 --gpu h100 --top 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find(count + " (--top 0 lists them)"), std::string::npos) << one.out;
  const auto three = Crest("dff --hidden 4096 --gpu h100 --top 3");
  EXPECT_NE(three.out.find(count + " (d_ff 10816, 10808, ...)"), std::string::npos) << three.out;
}

}  // namespace
}  // namespace crest
