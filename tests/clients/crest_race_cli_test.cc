// `crest dff` over a database a measuring sweep raced (the fake measuring
// backend: scripted times), and over either algorithm choice: what a user
// reads in text, JSON and CSV, and the refusals that name the field.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "crest_cli.h"
#include "db_files.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"
#include "spec_testing.h"
#include "temp_dir.h"

namespace crest {
namespace {

using crest::testing::Crest;
using crest::testing::FakeMeasuringBackend;
using crest::testing::Json;
using crest::testing::Spec;
using crest::testing::TempDir;

// h = 4096, window ±4 (d_ff 10918 … 10926): CloseLeadersScript's times.
constexpr auto Script = crest::testing::CloseLeadersScript;

// A database holding one measured sweep of h=4096 ±4.
std::string Measured(const TempDir& dir, const std::string& name, FakeMeasuringBackend& backend) {
  const std::string path = dir.File(name);
  backend.script = Script;
  // 10918 is 0.8% behind: slower only at a resolution finer than that.
  const absl::Status swept = crest::testing::SweepInto(
      path,
      Spec(
          R"({"dff": [{"hidden": 4096, "window": 4}], "measure": {"race": {"resolution": 0.005}}})"),
      backend);
  EXPECT_TRUE(swept.ok()) << swept;
  return path;
}

constexpr const char* kQuery = "dff --hidden 4096 --window 4 --gpu h100 --top 0 --db ";

TEST(CrestRace, TheAnswerSaysItsLeadersWereRacedAndShowsEachOnesStanding) {
  TempDir dir;
  FakeMeasuringBackend backend;
  const std::string db = Measured(dir, "raced.db", backend);

  const auto text = Crest(kQuery + db);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("race: the 3 leading candidates of job 1"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("all verdicts hold together at a 5% family-wise error rate"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("tied when the interval to the leader lies within 1 +/- 0.005"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("slower 1.00"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("algorithms: each GEMM's fastest verified algorithm"), std::string::npos);

  const auto doc = Json(Crest("--json " + std::string(kQuery) + db));
  EXPECT_EQ(doc["race"]["race_id"], 1);
  EXPECT_EQ(doc["race"]["job"], 1);
  EXPECT_EQ(doc["race"]["candidates"], 3);
  EXPECT_DOUBLE_EQ(doc["race"]["error_rate"].get<double>(), 0.05);
  EXPECT_EQ(doc["tied_with_best"], 2);
  const auto& rows = doc["candidates"];
  EXPECT_EQ(rows[0]["race"]["verdict"], "leader");
  EXPECT_EQ(rows[2]["d_ff"], 10918);
  EXPECT_EQ(rows[2]["race"]["verdict"], "slower");
  EXPECT_GT(rows[2]["race"]["ratio_low"].get<double>(), 1.0);
  EXPECT_TRUE(rows[3]["race"].is_null()) << "not raced";

  const auto csv = Crest("--csv " + std::string(kQuery) + db);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_NE(header.find("race,race_ratio,race_ratio_low,race_ratio_high"), std::string::npos)
      << header;
}

TEST(CrestRace, AlgoDefaultRanksByCuBlasLtsFirstChoiceAndSaysSo) {
  TempDir dir;
  FakeMeasuringBackend backend;
  backend.first_choice_slower = true;
  const std::string db = Measured(dir, "default.db", backend);
  const auto best = Json(Crest("--json " + std::string(kQuery) + db));
  const auto first = Json(Crest("--json " + std::string(kQuery) + db + " --algo default"));
  EXPECT_EQ(best["algo_choice"], "best");
  EXPECT_EQ(first["algo_choice"], "default");
  const auto time_of = [](const nlohmann::json& doc, int64_t d_ff) {
    for (const auto& row : doc["candidates"]) {
      if (row["d_ff"] == d_ff) return row["time_us"].get<double>();
    }
    return 0.0;
  };
  // FakeMeasurement's second algorithm takes 1.1x the first: cuBLASLt's
  // first choice here.
  EXPECT_NEAR(time_of(first, 10920), 1.1 * time_of(best, 10920), 1e-6);
  EXPECT_EQ(first["coverage"]["measured"], 9);
  EXPECT_TRUE(first["race"].is_null()) << "the race timed the fastest algorithms, not these";
  const auto text = Crest(std::string(kQuery) + db + " --algo default");
  EXPECT_NE(text.out.find("algorithms: each GEMM's cuBLASLt first choice"), std::string::npos)
      << text.out;
}

TEST(CrestRace, BadAlgoAndRaceFlagsAreRefusedNamingTheField) {
  const auto model = Crest("dff --hidden 4096 --gpu h100 --algo default");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("algo: --algo default is for --db or --server"), std::string::npos)
      << model.err;
  TempDir dir;
  FakeMeasuringBackend backend;
  const std::string db = Measured(dir, "x.db", backend);
  const auto bad = Crest(std::string(kQuery) + db + " --algo fastest");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("algo: 'fastest' is not best or default"), std::string::npos) << bad.err;
  const auto window =
      Crest("sweep --hidden 4096 --window 4 --gpu h100 --race-window 2 --db " + dir.File("s.db"));
  EXPECT_EQ(window.exit_code, 2);
  EXPECT_NE(window.err.find("measure.race.window (--race-window): must be in (0, 0.5]"),
            std::string::npos)
      << window.err;
  // A race flag replaces only the field it names: the spec's bad window stays
  // and is refused, though the flag's resolution is fine.
  const std::string spec = dir.File("spec.json");
  std::ofstream(spec) << R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 4}],
                             "measure": {"race": {"window": 0.7}}})";
  const auto merged =
      Crest("sweep --spec " + spec + " --race-resolution 0.02 --db " + dir.File("m.db"));
  EXPECT_EQ(merged.exit_code, 2);
  EXPECT_NE(merged.err.find("measure.race.window (--race-window): must be in (0, 0.5] (got 0.7)"),
            std::string::npos)
      << merged.err;
  const std::string sweep = "sweep --hidden 4096 --window 4 --gpu h100 --race-algos ";
  const auto unknown = Crest(sweep + "fastest --db " + dir.File("u.db"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--race-algos"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("fastest"), std::string::npos) << unknown.err;
  const auto twice = Crest(sweep + "best,best --db " + dir.File("t.db"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("measure.race.algos (--race-algos): must name best, default or both, "
                           "each once"),
            std::string::npos)
      << twice.err;
  const auto both = Crest(sweep + "best,default --db " + dir.File("b.db"));
  EXPECT_EQ(both.exit_code, 0) << both.err;
}

TEST(CrestRace, ARaceOfTheFirstProcedureSaysItsVerdictsHoldAtNoStatedRate) {
  // Races stored before schema 11 read error_rate 0: they tested every
  // candidate against the leader at every round, uncorrected.
  TempDir dir;
  FakeMeasuringBackend backend;
  const std::string db = Measured(dir, "old.db", backend);
  {
    const absl::Status made = crest::testing::MakeDatabase(db);
    ASSERT_TRUE(made.ok()) << made;
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE races SET error_rate = 0", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  const auto text = Crest(kQuery + db);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("hold at no stated error rate"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("family-wise"), std::string::npos) << text.out;
  EXPECT_DOUBLE_EQ(
      Json(Crest("--json " + std::string(kQuery) + db))["race"]["error_rate"].get<double>(), 0.0);
}

TEST(CrestReplay, ASweepOfARecordedTableIsAnsweredAsReplayedInEveryOutput) {
  TempDir dir;
  const std::string db = dir.File("replay.db");
  const std::string table =
      std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/torch-mlp-h4096.csv";
  const auto sweep = Crest("sweep --db " + db + " --backend replay --replay " + table +
                           " --gpu h100 --hidden 4096 --window 64");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err << sweep.out;
  EXPECT_NE(sweep.out.find("replay"), std::string::npos) << sweep.out;

  const std::string query = "dff --hidden 4096 --window 64 --gpu h100 --top 5 --db " + db;
  const auto text = Crest(query);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("129 replayed (simulated from a recorded table; not measured)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("replayed on: REPLAYED (not measured): torch-mlp-h4096.csv"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("race: the "), std::string::npos) << "the study race ran:\n" << text.out;
  EXPECT_EQ(text.out.find(" measured on:"), std::string::npos) << text.out;

  const auto json = Json(Crest("--json " + query));
  EXPECT_EQ(json["coverage"]["replayed"].get<int>(), 129);
  EXPECT_EQ(json["coverage"]["measured"].get<int>(), 0);
  for (const auto& row : json["candidates"]) {
    EXPECT_EQ(row["source"].get<std::string>(), "replayed");
    EXPECT_NE(row["device"]["replay"].get<std::string>().find("torch-mlp-h4096.csv"),
              std::string::npos);
  }

  const auto remote = Crest("--server localhost:1 sweep --backend replay --replay " + table +
                            " --gpu h100 --hidden 4096 --window 1");
  EXPECT_NE(remote.exit_code, 0);
  EXPECT_NE(remote.err.find("the replay backend runs locally"), std::string::npos) << remote.err;
  const auto stray = Crest("sweep --db " + db + " --replay " + table + " --gpu h100 --hidden 4096");
  EXPECT_NE(stray.exit_code, 0);
  EXPECT_NE(stray.err.find("--replay is for --backend replay"), std::string::npos) << stray.err;
  const auto stray_noise =
      Crest("sweep --db " + db + " --replay-noise 0.1 --gpu h100 --hidden 4096");
  EXPECT_NE(stray_noise.exit_code, 0);
  EXPECT_NE(stray_noise.err.find("--replay-noise is for --backend replay"), std::string::npos)
      << stray_noise.err;
  EXPECT_NE(text.out.find("s on the simulated device"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("interval = for a measured or replayed time"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace crest
