// End-to-end tests of the database commands of `crest`: sweep, dff --db,
// lookup, db export/merge/check/stats, and their refusals.
#include <sqlite3.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
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

nlohmann::json Json(const crest::testing::CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
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
  EXPECT_EQ(dff["coverage"]["predicted"], 33);
  EXPECT_EQ(dff["coverage"]["missing"], 32);
  EXPECT_EQ(dff["coverage"]["measured"], 0);
  for (const auto& row : dff["candidates"]) EXPECT_EQ(row["source"], "predicted");

  auto lookup = Json(Crest("lookup --m 8192 --n 4096 --k 10922 --gpu h100 --db " + db + " --json"));
  EXPECT_EQ(lookup["source"], "predicted");
  auto none = Crest("lookup --m 8192 --n 4096 --k 99 --gpu h100 --db " + db);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no result in " + db), std::string::npos) << none.err;

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
  auto clocks = Crest("sweep --db " + dir.File("x.db") + " --hidden 4096 --gpu h100 --clocks boost");
  EXPECT_EQ(clocks.exit_code, 2);
  EXPECT_NE(clocks.err.find("--clocks"), std::string::npos) << clocks.err;
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

  auto missing = Crest("dff --hidden 4096 --gpu h100 --db " + dir.File("typo.db"));
  EXPECT_EQ(missing.exit_code, 2);
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
  auto info = Json(Crest("info --json"));
  if (!info["devices"].empty()) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir dir;
  const std::string db = dir.File("gpu.db");
  auto r = Crest("sweep --db " + db + " --backend cublaslt --hidden 4096");
  EXPECT_EQ(r.exit_code, 1);
  const bool says_why = r.err.find("no CUDA device") != std::string::npos ||
                        r.err.find("not built into this crest") != std::string::npos;
  EXPECT_TRUE(says_why) << r.err;
  EXPECT_NE(access(db.c_str(), F_OK), 0) << "the database was created";
  // An existing database is left exactly as it was.
  ASSERT_EQ(Crest("sweep --db " + db + " --hidden 4096 --gpu h100 --window 2").exit_code, 0);
  const std::string before = ReadBytes(db);
  EXPECT_EQ(Crest("sweep --db " + db + " --backend cublaslt --hidden 4096").exit_code, 1);
  EXPECT_TRUE(ReadBytes(db) == before);
  const auto text = Crest("info");
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

}  // namespace
}  // namespace crest
