// End-to-end tests of the database commands of `crest`: sweep, dff --db,
// lookup, db export/merge/check/stats, and their refusals.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "replay_tables.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

using crest::testing::ReadBytes;
using crest::testing::RunCommand;
using crest::testing::TempDir;

crest::testing::CommandResult Crest(const std::string& args) {
  return RunCommand(std::string(CREST_BIN) + " " + args);
}

// The shipped table before and after a replayed upgrade, revalidated.
void ReplayUpgrade(const std::string& db, const std::string& slowed) {
  crest::testing::WriteSlowedMlpTable(slowed);
  auto before = Crest(crest::testing::ReplaySweepArgs(db, crest::testing::kMlpTable, 130100));
  ASSERT_EQ(before.exit_code, 0) << before.err;
  auto after = Crest(crest::testing::ReplaySweepArgs(db, slowed, 130200) + " --revalidate");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("re-timed 514 GEMMs"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("4 slower, 0 unresolved, 510 same, 0 faster of 514 GEMMs"),
            std::string::npos)
      << after.out;
}

nlohmann::json Json(const crest::testing::CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

// `crest dff --predict-only` answers with the model alone: a database that
// holds replayed times for every candidate is not read.
TEST(CrestDff, PredictOnlyReadsNoDatabase) {
  TempDir dir;
  const std::string db = dir.File("node.db");
  const auto sweep = Crest(crest::testing::ReplaySweepArgs(db, crest::testing::kMlpTable, 130100));
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const std::string query = "dff --hidden 4096 --gpu h100 --window 8 --json --db " + db;
  const auto stored = Json(Crest(query));
  EXPECT_EQ(stored["coverage"]["replayed"], 17) << stored.dump();
  const auto predicted = Json(Crest(query + " --predict-only"));
  EXPECT_EQ(predicted["coverage"]["replayed"], 0) << predicted.dump();
  EXPECT_EQ(predicted["coverage"]["predicted"], 17);
  for (const auto& row : predicted["candidates"]) EXPECT_EQ(row["source"], "predicted");
}

TEST(CrestSweep, PredictedSweepThenOfflineAnswersFromTheFile) {
  TempDir dir;
  const std::string db = dir.File("node.db");
  auto sweep = Json(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 16 --json"));
  EXPECT_EQ(sweep["job"]["state"], "done");
  EXPECT_EQ(sweep["new_results"], 66);
  auto again = Json(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 16 --json"));
  EXPECT_EQ(again["new_results"], 0);
  EXPECT_EQ(again["already_present"], 66);

  auto dff = Json(Crest("dff --hidden 4096 --gpu h100 --window 32 --db " + db + " --json"));
  EXPECT_EQ(dff["coverage"]["candidates"], 65);
  EXPECT_EQ(dff["coverage"]["predicted"], 65) << "33 from the file, 32 from the model run now";
  EXPECT_EQ(dff["coverage"]["missing"], 0);
  EXPECT_EQ(dff["coverage"]["measured"], 0);
  for (const auto& row : dff["candidates"]) EXPECT_EQ(row["source"], "predicted");

  auto lookup = Json(Crest("lookup --m 8192 --n 4096 --k 10922 --gpu h100 --db " + db + " --json"));
  EXPECT_EQ(lookup["source"], "predicted");
  auto live = Json(Crest("lookup --m 8192 --n 4096 --k 99 --gpu h100 --db " + db + " --json"));
  EXPECT_EQ(live["source"], "predicted") << "not in the file: the model answers, labelled";
  auto none = Crest("lookup --m 8192 --n 4096 --k 4096 --dtype fp8 --gpu a100 --db " + db);
  EXPECT_EQ(none.exit_code, 1) << "nothing at all answers fp8 on an A100";
  EXPECT_NE(none.err.find("no result in " + db), std::string::npos) << none.err;
  // Whatever the refusal points to works: `crest explain` would exit 2 here.
  EXPECT_EQ(none.err.find("crest explain"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("`crest gpus`"), std::string::npos) << none.err;
  EXPECT_EQ(Crest("gpus").exit_code, 0);

  auto stats = Json(Crest("db stats --db " + db + " --json"));
  EXPECT_EQ(stats["predictions"], 66);
  EXPECT_EQ(stats["jobs_by_state"]["done"], 2);
  EXPECT_EQ(Crest("db check --db " + db).exit_code, 0);
}

TEST(CrestSweep, SpecFileIsTheSameSweepAsTheFlags) {
  TempDir dir;
  const std::string db = dir.File("a.db");
  crest::testing::WriteBytes(dir.File("spec.json"),
                             R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 16}]})");
  ASSERT_EQ(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 16").exit_code, 0);
  auto r = Json(Crest("sweep --db " + db + " --spec " + dir.File("spec.json") + " --json"));
  EXPECT_EQ(r["new_results"], 0);
  EXPECT_EQ(r["already_present"], 66);
}

// The spec text of the only job in `db`.
std::string OnlyJobSpec(const std::string& db) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, "SELECT spec FROM jobs", -1, &stmt, nullptr), SQLITE_OK);
  std::string spec;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    spec = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  EXPECT_NE(sqlite3_step(stmt), SQLITE_ROW) << "more than one job";
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  return spec;
}

TEST(CrestSweep, MeasureFlagsBecomeTheSpecsMeasureSection) {
  TempDir dir;
  crest::testing::WriteBytes(dir.File("spec.json"),
                             R"({"gpu": "h100", "measure": {"top_k": 3},
                                 "dff": [{"hidden": 4096, "window": 1}]})");
  const std::string db = dir.File("m.db");
  ASSERT_EQ(Crest("sweep --db " + db + " --spec " + dir.File("spec.json") +
                  " --warm --clocks burst --max-seconds 2")
                .exit_code,
            0);
  const auto spec = nlohmann::json::parse(OnlyJobSpec(db));
  ASSERT_TRUE(spec.contains("measure")) << spec.dump();
  EXPECT_EQ(spec["measure"]["cache"], "warm");
  EXPECT_EQ(spec["measure"]["clocks"], "burst");
  EXPECT_EQ(spec["measure"]["top_k"], 3) << "the spec's own field was lost";
  EXPECT_EQ(spec["measure"]["max_seconds"], 2.0);
  // Without measure flags nothing is added: the default method.
  const std::string plain = dir.File("p.db");
  ASSERT_EQ(Crest("sweep --db " + plain + " --hidden 4096 --window 1 --gpu h100").exit_code, 0);
  EXPECT_FALSE(nlohmann::json::parse(OnlyJobSpec(plain)).contains("measure"));
}

TEST(CrestSweep, ABadMeasureFlagIsRefusedNamingIt) {
  TempDir dir;
  auto r = Crest("sweep --db " + dir.File("x.db") + " --hidden 4096 --gpu h100 --top-k 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("measure.top_k (--top-k): must be between 1 and 64 (got 0)"),
            std::string::npos)
      << r.err;
  auto clocks =
      Crest("sweep --db " + dir.File("x.db") + " --hidden 4096 --gpu h100 --clocks boost");
  EXPECT_EQ(clocks.exit_code, 2);
  EXPECT_NE(clocks.err.find("--clocks"), std::string::npos) << clocks.err;
}

const std::string kData = std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/";
const std::string kDevice = "--device 'NVIDIA H100 80GB HBM3' --tool 'torch.matmul, median of 20'";

TEST(CrestDbImport, TheSharedPyTorchCsvsImportAsTheyAreOnceAndNeverAnswerAsMeasured) {
  TempDir dir;
  const std::string db = dir.File("h100.db");
  auto first = Json(
      Crest("--json db import --db " + db + " --csv " + kData + "torch-mlp-h4096.csv " + kDevice));
  EXPECT_EQ(first["added"], 514);
  EXPECT_EQ(first["gpu"], "H100-SXM");
  EXPECT_EQ(first["source"], "imported");
  auto again = Json(
      Crest("--json db import --db " + db + " --csv " + kData + "torch-mlp-h4096.csv " + kDevice));
  EXPECT_EQ(again["added"], 0);
  EXPECT_EQ(again["already_present"], 514);
  auto stats = Json(Crest("db stats --json --db " + db));
  EXPECT_EQ(stats["imported"], 514);
  EXPECT_EQ(stats["measurements"], 0);
  auto dff = Json(Crest("dff --json --hidden 4096 --gpu h100 --window 4 --db " + db));
  EXPECT_EQ(dff["coverage"]["measured"], 0) << "an imported time answered as measured";
  auto refused = Crest("db import --db " + db + " --csv " + kData + "torch-mlp-h4096.csv");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("no device column; say it with --device"), std::string::npos)
      << refused.err;
}

TEST(CrestCalibrate, FitsTheSharedDataWritesTheFileAndCrestAnswersWithIt) {
  TempDir dir;
  const std::string db = dir.File("h100.db");
  for (const char* csv :
       {"torch-mlp-h4096.csv", "torch-mlp-h4096-repeat.csv", "torch-seed-bmm.csv"}) {
    ASSERT_EQ(Crest("db import --db " + db + " --csv " + kData + csv + " " + kDevice).exit_code, 0);
  }
  auto several = Crest("calibrate --db " + db);
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_NE(several.err.find("several dtypes: bf16 (1028 rows), fp16 (52 rows)"), std::string::npos)
      << several.err;
  const std::string out = dir.File("cal.json");
  auto c =
      Json(Crest("--json calibrate --db " + db + " --dtype bf16 --from-defaults --out " + out));
  EXPECT_EQ(c["gpu"], "H100-SXM");
  EXPECT_EQ(c["provenance"]["source"], "imported");
  EXPECT_EQ(c["provenance"]["rows"], 514);
  const auto& study = c["fit"]["after"]["studies"][0];
  EXPECT_EQ(study["candidates"], 257);
  EXPECT_GE(study["spearman"].get<double>(), 0.9);
  EXPECT_LE(c["fit"]["after"]["median_error"].get<double>(), 0.10);
  EXPECT_LT(c["fit"]["after"]["median_error"].get<double>(),
            c["fit"]["before"]["median_error"].get<double>());
  EXPECT_EQ(nlohmann::json::parse(ReadBytes(out))["id"], c["id"]) << "the file is the report";
  const std::string human =
      Crest("calibrate --db " + db + " --dtype bf16 --out " + dir.File("again.json")).out;
  EXPECT_NE(human.find("Spearman, MLP time"), std::string::npos) << human;
  EXPECT_NE(human.find("fallback_input.4"), std::string::npos);
  const std::string csv =
      Crest("--csv calibrate --db " + db + " --dtype bf16 --out " + dir.File("csv.json")).out;
  EXPECT_EQ(csv.rfind("parameter,before,after,status\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\nfast_tflops,"), std::string::npos) << csv;
  // A loaded calibration is the model crest answers with.
  auto explained = Json(
      Crest("--json --calibration " + out + " explain --m 8192 --n 4096 --k 10922 --gpu h100"));
  EXPECT_EQ(explained["model_version"], "tilewave-2+" + c["id"].get<std::string>());
  EXPECT_EQ(explained["kernel_family"], "fallback");
}

TEST(CrestCalibrate, CheckJudgesTheModelInForceWithoutFittingOrWriting) {
  TempDir dir;
  const std::string db = dir.File("h100.db");
  ASSERT_EQ(Crest("db import --db " + db + " --csv " + kData + "torch-mlp-h4096.csv " + kDevice)
                .exit_code,
            0);
  const std::string human = Crest("calibrate --check --db " + db + " --gpu h100 --dtype bf16").out;
  EXPECT_NE(human.find("checked tilewave-2+h100-sxm-bf16-"), std::string::npos) << human;
  EXPECT_NE(human.find("nothing fitted, nothing written"), std::string::npos) << human;
  auto shipped = Json(Crest("--json calibrate --check --db " + db + " --gpu h100 --dtype bf16"));
  auto defaults = Json(
      Crest("--json calibrate --check --from-defaults --db " + db + " --gpu h100 --dtype bf16"));
  EXPECT_EQ(shipped["model_version"].get<std::string>().rfind("tilewave-2+h100-sxm-bf16-", 0), 0u);
  EXPECT_EQ(defaults["model_version"], "tilewave-2");
  ASSERT_EQ(shipped["studies"].size(), 1u);
  EXPECT_EQ(shipped["studies"][0]["candidates"], 257);
  // PyTorch's timings, ranked by the shipped calibration (fitted to Crest's
  // measurements) and by the defaults.
  EXPECT_GE(shipped["studies"][0]["spearman"].get<double>(), 0.95);
  EXPECT_LT(defaults["studies"][0]["spearman"].get<double>(), 0.95);
  EXPECT_LT(shipped["median_error"].get<double>(), defaults["median_error"].get<double>());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".json") << "--check wrote " << entry.path();
  }
  // The H200 answers with the H100's calibration moved to it; this database
  // has no H200 rows to judge it by.
  auto none = Crest("calibrate --check --db " + db + " --gpu h200 --dtype bf16");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("holds no bf16 GEMM times of H200 (all rows) to check against"),
            std::string::npos)
      << none.err;
}

TEST(CrestCalibrate, RefusesWhatItCannotFit) {
  TempDir dir;
  const std::string empty = dir.File("empty.db");
  ASSERT_EQ(Crest("sweep --db " + empty + " --hidden 4096 --gpu h100 --window 1").exit_code, 0);
  auto none = Crest("calibrate --db " + empty);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("holds no measured or imported GEMM times"), std::string::npos)
      << none.err;
  auto few = Crest("calibrate --db " + empty + " --gpu h100 --dtype bf16");
  EXPECT_NE(few.exit_code, 0);
  EXPECT_NE(few.err.find("0 usable bf16 GEMMs on H100-SXM; at least 8 are needed"),
            std::string::npos)
      << few.err;
  crest::testing::WriteBytes(dir.File("bad.json"), "{\"schema_version\": 7}");
  auto bad = Crest("--calibration " + dir.File("bad.json") + " gpus");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(dir.File("bad.json") + ": calibration schema_version 7"),
            std::string::npos)
      << bad.err;
}

TEST(CrestGpus, SaysWhichGpusAreCalibrated) {
  auto gpus = Json(Crest("gpus --json"));
  for (const auto& g : gpus["gpus"]) {
    if (g["name"] == "H100-SXM") {
      EXPECT_EQ(g["calibrations"].size(), 2u);
      EXPECT_EQ(g["calibrations"][0]["dtype"], "bf16");
    } else if (g["name"] == "A100-SXM-80GB") {
      EXPECT_TRUE(g["calibrations"].empty());
      EXPECT_EQ(g["model_calibration"], "uncalibrated Ampere defaults");
    }
  }
  const auto text = Crest("gpus").out;
  EXPECT_NE(text.find("calibrated bf16,fp16"), std::string::npos) << text;
}

TEST(CrestDb, ExportMergeTwiceCheckAndStats) {
  TempDir dir;
  for (const char* node : {"a", "b"}) {
    const std::string db = dir.File(std::string(node) + ".db");
    const std::string window = node[0] == 'a' ? "8" : "24";
    ASSERT_EQ(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window " + window).exit_code,
              0);
    ASSERT_EQ(
        Crest("db export --db " + db + " --out " + dir.File(std::string(node) + ".snap")).exit_code,
        0);
  }
  const std::string into = dir.File("catalogue.db");
  auto first = Json(Crest("db merge --into " + into + " " + dir.File("a.snap") + " " +
                          dir.File("b.snap") + " --json"));
  EXPECT_EQ(first["merged"][0]["predictions"], 34);
  EXPECT_EQ(first["merged"][1]["predictions"], 98 - 34);
  auto second = Json(Crest("db merge --into " + into + " " + dir.File("a.snap") + " " +
                           dir.File("b.snap") + " --json"));
  for (const auto& m : second["merged"]) {
    EXPECT_EQ(m["predictions"], 0);
    EXPECT_EQ(m["jobs"], 0);
  }
  EXPECT_EQ(Json(Crest("db stats --db " + into + " --json"))["predictions"], 98);
  auto overwrite = Crest("db export --db " + into + " --out " + dir.File("a.snap"));
  EXPECT_EQ(overwrite.exit_code, 1);
  EXPECT_NE(overwrite.err.find("already exists"), std::string::npos);
}

TEST(CrestDb, RefusesFilesThatAreNotOursAndLeavesThemAlone) {
  TempDir dir;
  const std::string notes = dir.File("notes.txt");
  crest::testing::WriteBytes(notes, std::string(9000, 'n'));
  for (const std::string& cmd : {"sweep --db " + notes + " --hidden 4096 --gpu h100 --window 2",
                                 "dff --hidden 4096 --gpu h100 --db " + notes,
                                 "db check --db " + notes, "db stats --db " + notes}) {
    auto r = Crest(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find(notes + ": not a Crest database"), std::string::npos) << cmd << r.err;
  }
  EXPECT_TRUE(ReadBytes(notes) == std::string(9000, 'n'));

  // A database problem, not bad input: exit 1, as README says.
  for (const std::string& cmd :
       {"dff --hidden 4096 --gpu h100 --db " + dir.File("typo.db"),
        "lookup --m 1 --n 1 --k 1 --gpu h100 --db " + dir.File("typo.db"),
        "vocab --vocab 32000 --hidden 4096 --gpu h100 --db " + dir.File("typo.db"),
        "db stats --db " + dir.File("typo.db"), "calibrate --db " + dir.File("typo.db")}) {
    auto r = Crest(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find("no such database file"), std::string::npos) << cmd << r.err;
  }
  auto missing = Crest("dff --hidden 4096 --gpu h100 --db " + dir.File("typo.db"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such database file"), std::string::npos) << missing.err;

  const std::string newer = dir.File("newer.db");
  ASSERT_EQ(Crest("sweep --db " + newer + " --hidden 4096 --gpu h100 --window 1").exit_code, 0);
  sqlite3* raw = nullptr;
  sqlite3_open(newer.c_str(), &raw);
  sqlite3_exec(raw, "PRAGMA journal_mode=DELETE; PRAGMA user_version=99", nullptr, nullptr,
               nullptr);
  sqlite3_close(raw);
  const std::string before = ReadBytes(newer);
  auto r = Crest("sweep --db " + newer + " --hidden 4096 --gpu h100 --window 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("schema version 99 is newer"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadBytes(newer) == before);
}

TEST(CrestDb, CheckExitsOneOnACorruptFile) {
  TempDir dir;
  const std::string db = dir.File("c.db");
  ASSERT_EQ(
      Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 300 --pass train").exit_code,
      0);
  std::string bytes = ReadBytes(db);
  ASSERT_GT(bytes.size(), 40000u);
  for (size_t i = 3 * 4096; i < 8 * 4096; ++i) bytes[i] = static_cast<char>(i % 251);
  crest::testing::WriteBytes(db, bytes);
  auto r = Crest("db check --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(ReadBytes(db) == bytes);
}

TEST(CrestSweep, CublasLtWithoutADeviceExitsNonZeroAndTouchesNoDatabase) {
  // The machine's GPUs are hidden (CUDA_VISIBLE_DEVICES=""), so this runs
  // where a GPU is present too.
  const auto Hidden = [](const std::string& args) {
    return RunCommand("CUDA_VISIBLE_DEVICES= " + std::string(CREST_BIN) + " " + args);
  };
  auto info = Json(Hidden("info --json"));
  ASSERT_TRUE(info["devices"].empty()) << "a hidden device was listed";
  TempDir dir;
  const std::string db = dir.File("gpu.db");
  auto r = Hidden("sweep --db " + db + " --backend cublaslt --hidden 4096");
  EXPECT_EQ(r.exit_code, 1);
  const bool says_why = r.err.find("no CUDA device") != std::string::npos ||
                        r.err.find("not built into this crest") != std::string::npos;
  EXPECT_TRUE(says_why) << r.err;
  EXPECT_NE(access(db.c_str(), F_OK), 0) << "the database was created";
  // An existing database is left exactly as it was.
  ASSERT_EQ(Hidden("sweep --db " + db + " --hidden 4096 --gpu h100 --window 2").exit_code, 0);
  const std::string before = ReadBytes(db);
  EXPECT_EQ(Hidden("sweep --db " + db + " --backend cublaslt --hidden 4096").exit_code, 1);
  EXPECT_TRUE(ReadBytes(db) == before);
  const auto text = Hidden("info");
  EXPECT_NE(text.out.find("devices: none"), std::string::npos) << text.out;
}

TEST(CrestSweep, RefusesWhatItCannotRun) {
  TempDir dir;
  const std::string db = dir.File("x.db");
  auto no_target = Crest("sweep --db " + db + " --hidden 4096");
  EXPECT_EQ(no_target.exit_code, 2);
  EXPECT_NE(no_target.err.find("gpu: the model backend needs a target GPU"), std::string::npos);
  auto nothing = Crest("sweep --db " + db + " --gpu h100");
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("give --hidden"), std::string::npos);
  auto bad_spec = Crest("sweep --db " + db + " --spec /nonexistent.json");
  EXPECT_NE(bad_spec.exit_code, 0);
  EXPECT_NE(bad_spec.err.find("cannot read"), std::string::npos);
  auto unknown = Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --backend tpu");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown backend 'tpu'"), std::string::npos);
}

TEST(CrestCompare, ARevalidatedUpgradeIsComparedAndFailsOnRegressionWithExitCode3) {
  TempDir dir;
  const std::string db = dir.File("node.db");
  ReplayUpgrade(db, dir.File("slowed.csv"));
  auto text = Crest("compare --db " + db + " --base cublaslt:130100 --new cublaslt:130200");
  EXPECT_EQ(text.exit_code, 0) << "a regression alone is not an error: " << text.err;
  EXPECT_NE(text.out.find("REPLAYED (not measured)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("summary: 4 slower, 0 unresolved, 510 same, 0 faster"), std::string::npos)
      << text.out;
  auto gate = Crest("compare --db " + db + " --base job:1 --new job:2 --fail-on-regression");
  EXPECT_EQ(gate.exit_code, 3) << gate.err;
  auto loose = Crest("compare --db " + db +
                     " --base job:1 --new job:2 --threshold 10% "
                     "--fail-on-regression");
  EXPECT_EQ(loose.exit_code, 0) << "8% is below a 10% threshold: " << loose.out;
  auto json = Json(Crest("--json compare --db " + db + " --base job:1 --new job:2"));
  ASSERT_EQ(json["gemms"].size(), 514u);
  const auto& worst = json["gemms"][0];
  EXPECT_EQ(worst["verdict"], "slower");
  for (const char* field : {"m", "n", "k", "batch", "dtype", "layout", "ratio", "ratio_low",
                            "ratio_high", "coverage", "alignment"}) {
    EXPECT_TRUE(worst.contains(field)) << field;
  }
  EXPECT_GT(worst["ratio_low"].get<double>(), 1.0);
  EXPECT_EQ(json["summary"]["slower"], 4);
  auto csv = Crest("--csv compare --db " + db + " --base job:1 --new job:2");
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 515) << "a header and 514 rows";
  auto bad = Crest("compare --db " + db + " --base jbo:1 --new job:2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--base: 'jbo:1'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace crest
