// One invocation of the command line in process (run_cli.h): which commands
// it registers, and the d_ff rows it keeps apart from the JSON document for
// the Python extension (dff_row_fields.h).
#include "run_cli.h"

#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "dff_row_fields.h"
#include "gtest/gtest.h"
#include "json_views.h"
#include "nlohmann/json.hpp"

namespace crest::cli {
namespace {

TEST(Registrars, EachIsNamedAsTheCommandItRegisters) {
  for (const auto commands : {AllCommands(), AnsweringCommands()}) {
    for (const Registrar& registrar : commands) {
      CLI::App root;
      const Command command = registrar.add(root);
      EXPECT_EQ(command.app->get_name(), registrar.name);
    }
  }
}

struct Outcome {
  int code = 0;
  std::string out, err;
};

Outcome RunAll(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, AllCommands(), out, err);
  return {code, out.str(), err.str()};
}

TEST(RunCli, AnOptionValueNamingAnotherCommandLeavesTheCommandGivenToRun) {
  // "dff" is a value here: lookup runs, and refuses the GPU by name.
  const Outcome bad_gpu = RunAll({"lookup", "--gpu", "dff", "--m", "8", "--n", "8", "--k", "8"});
  EXPECT_EQ(bad_gpu.code, kExitBadInput);
  EXPECT_NE(bad_gpu.err.find("crest lookup: error: gpu: unknown GPU 'dff'"), std::string::npos)
      << bad_gpu.err;
  // With one command named, the others are still unknown words, not commands.
  const Outcome help = RunAll({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  for (const Registrar& registrar : AllCommands()) {
    EXPECT_NE(help.out.find(std::string(registrar.name)), std::string::npos) << registrar.name;
  }
  const Outcome one = RunAll({"--json", "gpus"});
  EXPECT_EQ(one.code, kExitOk) << one.err;
}

TEST(RunCli, KeptDffRowsAreTheDocumentsCandidatesFieldByField) {
  const std::vector<std::string> args = {"--json",   "dff",  "--hidden", "4096",  "--gpu",
                                         "h100",     "--tp", "2",        "--top", "0",
                                         "--window", "24",   "--pass",   "train"};
  std::ostringstream out, err;
  nlohmann::ordered_json whole;
  ASSERT_EQ(RunCli(args, AnsweringCommands(), out, err, &whole), kExitOk) << err.str();
  nlohmann::ordered_json apart;
  std::vector<tuner::DffRow> rows;
  ASSERT_EQ(RunCli(args, AnsweringCommands(), out, err, &apart, &rows), kExitOk) << err.str();

  const nlohmann::ordered_json& candidates = whole["candidates"];
  ASSERT_EQ(rows.size(), candidates.size());
  ASSERT_GT(rows.size(), 10u);
  EXPECT_TRUE(apart["candidates"].empty());
  apart["candidates"] = candidates;
  EXPECT_EQ(apart, whole) << "the rest of the document is the same";
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json row = DffRowJson(rows[i], static_cast<int64_t>(i + 1));
    EXPECT_EQ(nlohmann::ordered_json::parse(row.dump()), candidates[i]) << "row " << i;
  }
}

TEST(DffRowFields, TheRaceIsFlatInTheTableAndNestedInTheJson) {
  tuner::DffRow row;
  row.d_ff = 11008;
  row.speedup_vs_baseline = 0;  // no baseline: speed-up and basis are null
  row.race_verdict = "tied";
  row.race_ratio = 1.004;
  const nlohmann::json json = DffRowJson(row, 3);
  for (const DffRowField& field : DffRowFields()) {
    const DffFieldValue value = field.get(row, 3);
    if (field.name == "race_verdict") {
      EXPECT_EQ(std::get<std::string_view>(value), "tied");
    } else if (field.name == "race_ratio") {
      EXPECT_EQ(std::get<double>(value), 1.004);
    } else if (field.name == "rank") {
      EXPECT_EQ(std::get<int64_t>(value), 3);
    } else if (field.name == "speedup_vs_baseline" || field.name == "speedup_basis") {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(value)) << field.name;
    }
    EXPECT_EQ(json.contains(std::string(field.name)), field.in_json) << field.name;
  }
  EXPECT_EQ(json["race"]["verdict"], "tied");
  EXPECT_EQ(json["race"]["ratio"], 1.004);
}

}  // namespace
}  // namespace crest::cli
