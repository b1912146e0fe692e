// The architect's answers from the `crest` binary: `crest vocab`, `crest
// design`, --csv on the tables, and the refusals that name the field.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crest/tuner/dff_query.h"
#include "crest/tuner/dff_ranking.h"
#include "crest_cli.h"
#include "db_files.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

using crest::testing::CommandResult;
using crest::testing::Crest;
using crest::testing::Json;
using crest::testing::RunCommand;

// RFC 4180 lines (no line breaks inside cells): quoted cells keep their commas.
std::vector<std::vector<std::string>> Csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

TEST(CrestVocab, RanksPaddingsOfAnOddVocabularyAndThePaddedOnesWin) {
  const auto doc = Json(Crest("vocab --vocab 50257 --hidden 4096 --gpu h100 --json"));
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["baseline"], 50257);
  const auto& rows = doc["candidates"];
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows.back()["vocab"], 50257) << "the unpadded vocabulary is the slowest";
  EXPECT_GT(rows.front()["speedup"].get<double>(), 1.5);
  for (const auto& row : rows) {
    EXPECT_EQ(row["source"], "predicted");
    EXPECT_EQ(row["train"]["provenance"].get<std::string>().rfind("tilewave-2", 0), 0u);
    EXPECT_EQ(row["extra_params"], (row["vocab"].get<int64_t>() - 50257) * 4096);
  }
  const auto human = Crest("vocab --vocab 50257 --hidden 4096 --tp 8 --gpu h100");
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("baseline = the smallest padding, 50304"), std::string::npos)
      << human.out;
}

TEST(CrestVocab, CsvIsTheTableAloneWithPlainNumbers) {
  const auto r = Crest("--csv vocab --vocab 50257 --hidden 4096 --gpu h100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = Csv(r.out);
  ASSERT_EQ(rows.size(), 8u) << r.out;
  EXPECT_EQ(rows[0][2], "vocab");
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  ASSERT_LT(column("source"), rows[0].size());
  ASSERT_LT(column("run"), rows[0].size());
  const size_t extra = column("extra_params");
  ASSERT_LT(extra, rows[0].size());
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size()) << "no thousands separators split a cell";
    EXPECT_NO_THROW((void)std::stoll(rows[i][extra])) << rows[i][extra];
    EXPECT_EQ(rows[i][column("run")], "-") << "predicted rows come from no run";
  }
}

TEST(CrestDesign, RanksExplicitConfigsListsTheBrokenOnesAndWarnsOfHeadDims) {
  const auto doc = Json(Crest(
      "design --hidden 4096,4100 --heads 32,4 --kv-heads 4 --vocab 32000 --seq 4096 --layers 32 "
      "--dp 8 --zero 3 --gpu h100 --json"));
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["configs"].size(), 3u) << "h 4096 with 32 and 4 heads, 4100 with 4";
  ASSERT_EQ(doc["broken_rules"].size(), 1u);
  EXPECT_EQ(doc["broken_rules"][0]["rule"], "hidden (4100) must be divisible by heads (32)");
  EXPECT_NE(doc["attention_note"].get<std::string>().find("FlashAttention"), std::string::npos);
  for (const auto& c : doc["configs"]) {
    EXPECT_EQ(c["source"], "predicted");
    EXPECT_GT(c["tokens_per_s_per_gpu"].get<double>(), 0);
    EXPECT_GT(c["mfu_peak"].get<double>(), 0);
    EXPECT_LT(c["mfu_peak"].get<double>(), 1);
    EXPECT_LE(c["memory"]["total_gib"].get<double>(), 80);
    EXPECT_TRUE(c["memory"]["fits"].get<bool>());
    EXPECT_GT(c["step"]["other_kernels"]["time_us"].get<double>(), 0);
    EXPECT_EQ(c["step"]["other_kernels"]["source"], "predicted");
    if (c["config"]["hidden"] == 4096) {
      EXPECT_EQ(c["config"]["d_ff"], 11008) << "8/3*h rounded up to 256";
    }
    if (c["config"]["heads"] == 4 && c["config"]["hidden"] == 4096) {
      ASSERT_EQ(c["warnings"].size(), 1u);
      EXPECT_NE(c["warnings"][0].get<std::string>().find("head dim 1024 is above 256"),
                std::string::npos);
    }
  }
  const auto human = Crest(
      "design --hidden 4096,4100 --heads 32 --vocab 32000 --seq 4096 "
      "--layers 32 --dp 8 --zero 3 --gpu h100");
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("not ranked, each breaks a rule:"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("h=4100 a=32"), std::string::npos) << human.out;
}

TEST(CrestDesign, SearchesNearAParameterBudget) {
  const auto doc =
      Json(Crest("design --params 7B --tolerance 5% --vocab 32000 --seq 4096 "
                 "--dp 8 --zero 3 --gpu h100 --top 0 --json"));
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_GT(doc["configs"].size(), 5u);
  EXPECT_EQ(doc["rank_by"], "model_flops_per_s_per_gpu") << "sizes differ: equal work";
  // Listed tie group by group, each group fastest first, each group's leader
  // slower than the one before.
  double last = 1e300, leader = 1e300;
  int group = 0;
  bool llama = false;
  for (const auto& c : doc["configs"]) {
    const double params = c["params"]["total"].get<double>();
    EXPECT_NEAR(params, 7e9, 0.05 * 7e9);
    const double tps = c["model_flops_per_s_per_gpu"].get<double>();
    if (c["tie_group"].get<int>() != group) {
      group = c["tie_group"].get<int>();
      EXPECT_LE(tps, leader) << "group " << group << "'s leader";
      leader = tps;
    } else {
      EXPECT_LE(tps, last) << "fastest first within group " << group;
    }
    last = tps;
    const auto& k = c["config"];
    llama |= k["hidden"] == 4096 && k["heads"] == 32 && k["kv_heads"] == 32 && k["d_ff"] == 11008 &&
             k["layers"] == 32;
  }
  EXPECT_TRUE(llama) << "Llama-2-7B's own shape is among a 7B search's configurations";
}

struct Refusal {
  const char* args;
  const char* message;
};

class CrestAnswersRefuse : public ::testing::TestWithParam<Refusal> {};

TEST_P(CrestAnswersRefuse, WithExitCode2NamingTheFieldAndTheCommand) {
  const auto r = Crest(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Crest, CrestAnswersRefuse,
    ::testing::Values(
        Refusal{"dff --hidden 4096 --gpu h100 --align 3000",
                "crest dff: error: align (3000) must be at most window (128)"},
        Refusal{"shapes --hidden 4096 --heads 32 --d-ff 11008 --vocab 50257 --seq 4096 --tp 8",
                "pad it, e.g. to 51200"},
        Refusal{"vocab --vocab 0 --hidden 4096 --gpu h100", "vocab must be positive (got 0)"},
        Refusal{"vocab --vocab 50257 --hidden 4096 --gpu h100 --rank-by bwd",
                "rank-by: 'bwd' is not fwd or train"},
        Refusal{"design --hidden 4096:x --heads 32 --vocab 1 --seq 1 --layers 1 --gpu h100",
                "hidden: '4096:x' is not a value, a list (A,B) or a range FROM:TO:STEP"},
        Refusal{"design --hidden 4096 --heads 32 --vocab 32000 --seq 4096 --gpu h100",
                "layers: give --layers (or --params to search)"},
        Refusal{"design --params 7B --hidden 4096 --vocab 32000 --seq 4096 --gpu h100",
                "hidden: --params searches it; leave out --hidden"},
        Refusal{"design --params 7Q --vocab 32000 --seq 4096 --gpu h100",
                "params: '7Q' is not a count"},
        Refusal{"design --hidden 1:100000:1 --heads 1 --vocab 8 --seq 8 --layers 1 --gpu h100",
                "hidden: more than 4096 values"},
        Refusal{"design --hidden 128:4096:128 --heads 1:32:1 --vocab 8 --seq 8 --layers 1:30:1 "
                "--gpu h100",
                "the dimensions give 30720 configurations; at most 20000"},
        Refusal{"--csv --json gpus", "excludes"},
        Refusal{"dff --hidden 4096 --gpu h100 --windw 4",
                "crest dff: error: The following arguments were not expected: 4 --windw"}));

// Nothing ranked is not a success: every configuration the user gave breaks
// a rule (listed with its rule), so the exit says bad input.
TEST(CrestDesign, EveryConfigurationBreakingARuleExitsTwoAfterListingThem) {
  const auto r = Crest(
      "design --hidden 4100 --heads 32 --vocab 32000 --seq 4096 --layers 32 "
      "--gpu h100");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("hidden (4100) must be divisible by heads (32)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("every one of the 1 configurations breaks a rule"), std::string::npos)
      << r.err;
  const auto json = Crest(
      "--json design --hidden 4100,4096 --heads 32 --vocab 32000 --seq 4096 "
      "--layers 32 --dp 8 --zero 3 --gpu h100");
  EXPECT_EQ(json.exit_code, 0) << "one of two ranks: a success";
}

// A design answer says where its GEMM times come from, and what its
// intervals are not.
TEST(CrestDesign, SaysWhereItsGemmTimesComeFromAndWhatItsIntervalIsNot) {
  const auto r = Crest(
      "design --hidden 4096 --heads 32 --vocab 32000 --seq 4096 --layers 32 "
      "--dp 8 --zero 3 --gpu h100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GEMMs predicted by: tilewave-2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GEMMs measured on:"), std::string::npos) << "nothing measured here";
  EXPECT_NE(r.out.find("is not a coverage interval for a real run's step"), std::string::npos);
  const auto doc =
      Json(Crest("design --hidden 4096 --heads 32 --vocab 32000 --seq 4096 "
                 "--layers 32 --dp 8 --zero 3 --gpu h100 --json"));
  EXPECT_NE(doc["interval_note"].get<std::string>().find("not a coverage interval"),
            std::string::npos);
}

// Sizes past the limits are refused by name, never computed with first, and
// a huge argument is not echoed back whole.
TEST(CrestDesign, HugeInputIsRefusedByNameWithoutEchoingIt) {
  const auto big = Crest(
      "design --hidden 9223372036854775807 --heads 1 --vocab 1 --seq 1 "
      "--layers 1 --gpu h100 --mlp gelu");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.out.find("hidden must be at most 262144"), std::string::npos) << big.out;
  const auto echo = Crest("design --hidden " + std::string(100000, '9') +
                          " --heads 32 --vocab 1 --seq 1 --layers 1 --gpu h100");
  EXPECT_EQ(echo.exit_code, 2);
  EXPECT_NE(echo.err.find("...' (100000 characters) is not"), std::string::npos) << echo.err;
  EXPECT_LT(echo.err.size(), 400u) << "the argument is quoted, not echoed";
}

TEST(CrestShapes, WarnsOfHeadDimsFusedAttentionCannotRun) {
  const auto r = Crest("shapes --hidden 4096 --heads 4 --d-ff 11008 --vocab 32000 --seq 4096");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: head dim 1024 is above 256"), std::string::npos) << r.err;
}

// Every command's answer has a table, so --csv works for each (one printer
// per format over every result type).
TEST(CrestCsv, EveryLocalCommandPrintsCsv) {
  testing::TempDir dir;
  const std::string db = dir.File("node.db");
  ASSERT_EQ(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 1").exit_code, 0);
  for (const std::string& args :
       {std::string("gpus"), std::string("info"),
        std::string("dff --hidden 4096 --gpu h100 --window 8"),
        std::string("explain --m 4096 --n 4096 --k 4096 --gpu h100"),
        std::string("shapes --hidden 4096 --heads 32 --d-ff 11008 --vocab 32000 --seq 4096"),
        std::string("design --hidden 4096 --heads 32 --vocab 32000 --seq 4096 --layers 32 "
                    "--dp 8 --zero 3 --gpu h100"),
        "lookup --m 8192 --n 4096 --k 10922 --gpu h100 --db " + db, "db stats --db " + db,
        "db check --db " + db, "sweep --db " + db + " --hidden 4096 --gpu h100 --window 1",
        "doctor --no-gpu --no-daemon --state-dir " + dir.path()}) {
    const auto r = Crest("--csv " + args);
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    const auto rows = Csv(r.out);
    ASSERT_GE(rows.size(), 2u) << args;
    for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size()) << args << ": " << r.out;
  }
}

TEST(CrestCsv, ExplainsTilesSayTheyArePredictedAndByWhichModel) {
  const auto r = Crest("--csv explain --m 4096 --n 4096 --k 4096 --gpu h100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = Csv(r.out);
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows[0][rows[0].size() - 2], "source");
  EXPECT_EQ(rows[1][rows[1].size() - 2], "predicted");
  EXPECT_EQ(rows[1].back().rfind("tilewave-2", 0), 0u) << rows[1].back();
}

TEST(CrestDb, VocabAndDesignAnswerFromADatabaseAndFillGapsWithTheModel) {
  testing::TempDir dir;
  const std::string db = dir.File("node.db");
  ASSERT_EQ(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 0").exit_code, 0);
  const auto vocab =
      Json(Crest("vocab --vocab 50257 --hidden 4096 --gpu h100 --db " + db + " --json"));
  EXPECT_EQ(vocab["answered_by"], db);
  EXPECT_EQ(vocab["candidates"].size(), 7u) << "nothing of the logits is in the file";
  const auto design =
      Json(Crest("design --hidden 4096 --heads 32 --vocab 32000 --seq 4096 "
                 "--layers 32 --dp 8 --zero 3 --gpu h100 --json --db " +
                 db));
  ASSERT_EQ(design["configs"].size(), 1u);
  EXPECT_EQ(design["configs"][0]["source"], "predicted");
  EXPECT_EQ(Crest("vocab --vocab 8 --hidden 8 --gpu h100 --db " + dir.File("typo.db")).exit_code, 1)
      << "a database problem";
}

// A database with measurements (a scripted device) for d_ff 10920..10924 of
// h=4096 and nothing else, slower than every prediction: one answer with one
// headline best (the largest speed-up over a baseline of its own kind: a
// predicted row here), one rank over all rows, each kind's speed-ups against
// its own kind's baseline, never null.
TEST(CrestDb, APartlyMeasuredWindowHasOneHeadlineAndKindsNeverMix) {
  testing::TempDir dir;
  const std::string path = dir.File("node.db");
  {
    tuner::DffQuery q;
    q.dff.hidden = 4096;
    std::vector<tuner::GemmShape> measured;
    for (int64_t d_ff = 10920; d_ff <= 10924; ++d_ff) {
      auto gemms = tuner::DffCandidateGemms(q, d_ff);
      ASSERT_TRUE(gemms.ok());
      measured.insert(measured.end(), gemms->begin(), gemms->end());
    }
    // Slow enough (10 ms per GEMM) to be slower than every prediction.
    const absl::Status added = testing::AddMeasuredOnFakeH100(path, measured, 10000);
    ASSERT_TRUE(added.ok()) << added;
  }
  const auto r = Crest("dff --hidden 4096 --gpu h100 --window 8 --db " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5 of 17 candidates measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12 predicted"), std::string::npos) << r.out;
  const size_t best = r.out.find("best: d_ff ");
  ASSERT_NE(best, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the baseline, predicted", best), std::string::npos) << r.out;
  const size_t measured = r.out.find("measured (5 candidates)");
  const size_t predicted = r.out.find("predicted (12 candidates, by tilewave-2");
  ASSERT_NE(measured, std::string::npos) << r.out;
  ASSERT_NE(predicted, std::string::npos) << r.out;
  EXPECT_LT(predicted, measured) << "the headline's kind first";
  const auto doc =
      Json(Crest("dff --hidden 4096 --gpu h100 --window 8 --top 0 --json --db " + path));
  std::vector<std::pair<std::string, int>> order;
  for (const auto& row : doc["candidates"]) {
    order.emplace_back(row["source"].get<std::string>(), row["rank"].get<int>());
  }
  ASSERT_EQ(order.size(), 17u);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].first, i < 12 ? "predicted" : "measured") << i;
    EXPECT_EQ(order[i].second, static_cast<int>(i) + 1) << "one rank over the answer";
  }
  EXPECT_EQ(doc["headline"]["source"], "predicted");
  EXPECT_EQ(doc["headline"]["d_ff"], doc["candidates"][0]["d_ff"]);
  EXPECT_EQ(doc["baseline"]["source"], "measured");
  EXPECT_GT(doc["baseline"]["predicted_time_us"].get<double>(), 0);
  std::set<int> measured_groups;
  for (const auto& row : doc["candidates"]) {
    EXPECT_FALSE(row["speedup_vs_baseline"].is_null()) << "each kind has its own baseline";
    EXPECT_EQ(row["speedup_basis"], row["source"]);
    if (row["source"] == "measured") measured_groups.insert(row["tie_group"].get<int>());
  }
  EXPECT_FALSE(measured_groups.contains(1)) << "no measured row is tied with a prediction";
}

}  // namespace
}  // namespace crest
