// `crest --server`: the CLI against a real crestd gives the same answers as
// against the daemon's database file, and says plainly what went wrong.
#include <signal.h>

#include <fstream>
#include <string>

#include "crestd_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "replay_tables.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

class CrestRemote : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(daemon_.Start(CRESTD_BIN, dir_.path(), {}, &why)) << why;
  }
  testing::CommandResult Crest(const std::string& args) {
    return testing::RunCommand(std::string(CREST_BIN) + " --server " + daemon_.address() + " " +
                               args);
  }
  // The table and everything after it: what must not depend on where the
  // answer came from.
  static std::string Table(const std::string& out) { return out.substr(out.find("rank")); }

  testing::TempDir dir_;
  testing::CrestdProcess daemon_;
};

TEST_F(CrestRemote, SweepThroughTheDaemonThenTheSameRankingRemoteAndFromTheFile) {
  const auto sweep = Crest("sweep --hidden 4096 --gpu h100 --window 16");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("job 1: done, 66/66 GEMMs"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.err.find("66/66"), std::string::npos) << "progress is drawn: " << sweep.err;

  const auto remote = Crest("dff --hidden 4096 --gpu h100 --window 16 --top 5");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  const auto local =
      testing::RunCommand(std::string(CREST_BIN) + " dff --db " + dir_.File("crest.db") +
                          " --hidden 4096 --gpu h100 --window 16 --top 5");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(Table(remote.out), Table(local.out));
  EXPECT_NE(remote.out.find("answered by: crestd at " + daemon_.address()), std::string::npos);

  const auto lookup = Crest("lookup --m 8192 --n 4096 --k 10922 --gpu h100");
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_NE(lookup.out.find("PREDICTED"), std::string::npos) << lookup.out;

  const auto explain = Crest("explain --m 2304 --n 1536 --k 4096 --gpu a100 --dtype fp16");
  const auto explained_here = testing::RunCommand(
      std::string(CREST_BIN) + " explain --m 2304 --n 1536 --k 4096 --gpu a100 --dtype fp16");
  EXPECT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_EQ(explain.out, explained_here.out);
}

// Never an empty answer: a daemon that has swept nothing answers with its
// model, labelled predicted, and the table equals the local prediction's.
TEST_F(CrestRemote, AnUnsweptWindowIsAnsweredByTheModelLabelledPredicted) {
  const auto remote = Crest("dff --hidden 6144 --gpu h100 --window 32 --top 5");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_NE(remote.out.find("0 of 65 candidates measured"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find(", 65 predicted"), std::string::npos) << remote.out;
  const auto local = testing::RunCommand(std::string(CREST_BIN) +
                                         " dff --hidden 6144 --gpu h100 --window 32 --top 5");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(Table(remote.out), Table(local.out));
  const auto lookup = Crest("lookup --m 8192 --n 6144 --k 16384 --gpu h100 --json");
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_NE(lookup.out.find("\"source\": \"predicted\""), std::string::npos) << lookup.out;
}

// `crest vocab` and `crest design` through a crestd (its LookupGemm per GEMM)
// answer as from the model here when the node has measured nothing.
TEST_F(CrestRemote, VocabAndDesignThroughTheDaemonEqualTheLocalAnswer) {
  for (const std::string args :
       {"vocab --vocab 50257 --hidden 4096 --tp 2 --gpu h100",
        "design --hidden 4096,5120 --heads 32,40 --vocab 50304 --seq 2048 --layers 24 --dp 8 "
        "--zero 3 --gpu h100",
        // A search asks the node's d_ff answer at each ratio (8/3, 3.5, 4): the
        // remote search must be the local one, configuration for configuration.
        "design --params 7B --vocab 32000 --seq 4096 --dp 8 --zero 3 --top 0 --gpu h100"}) {
    const auto remote = Crest("--csv " + args);
    const auto local = testing::RunCommand(std::string(CREST_BIN) + " --csv " + args);
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    ASSERT_EQ(local.exit_code, 0) << local.err;
    EXPECT_EQ(remote.out, local.out) << args;
    const auto human = Crest(args);
    EXPECT_NE(human.out.find("answered by: crestd at " + daemon_.address()), std::string::npos)
        << human.out;
  }
}

// One producer of a node's facts (measure::ProbeNode): `crest info` of this
// machine and of a crestd on it report the same predictor, calibrations,
// backends and devices (or the same reason there are none).
TEST_F(CrestRemote, InfoOfThisMachineAndOfItsCrestdAgreeOnTheNodesFacts) {
  const auto remote = Crest("--json info");
  const auto local = testing::RunCommand(std::string(CREST_BIN) + " --json info");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const auto r = nlohmann::json::parse(remote.out);
  const auto l = nlohmann::json::parse(local.out);
  EXPECT_EQ(r["program"], "crestd");
  EXPECT_EQ(l["program"], "crest");
  for (const char* key : {"predictor", "calibrations", "backends"}) {
    EXPECT_EQ(r[key], l[key]) << key;
  }
  EXPECT_EQ(r["devices"].size(), l["devices"].size());
  // The same reason, naming its program where the build has no CUDA.
  std::string expected = l["device_error"];
  if (const size_t at = expected.find("this crest "); at != std::string::npos) {
    expected.replace(at, 11, "this crestd ");
  }
  EXPECT_EQ(std::string(r["device_error"]), expected);
  if (l["devices"].empty()) {
    EXPECT_NE(expected.find("no CUDA device"), std::string::npos) << expected;
  }
}

// --gpu names the target of a spec that leaves it out, on every remote path.
TEST_F(CrestRemote, GpuFlagWorksWithASpecFileThroughTheDaemon) {
  const std::string spec = dir_.File("no-gpu.json");
  std::ofstream(spec) << R"({"version": 1, "dff": [{"hidden": 2048, "window": 2}]})";
  const auto submit = Crest("jobs submit --spec " + spec + " --gpu h100 --wait");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("done"), std::string::npos) << submit.out;
  const auto sweep = Crest("sweep --spec " + spec + " --gpu h100");
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto clash = Crest("jobs submit --spec " + spec + " --gpu a100");
  EXPECT_EQ(clash.exit_code, 0) << "the spec names no GPU: --gpu is its target";
  std::ofstream(spec) << R"({"version": 1, "gpu": "h100", "dff": [{"hidden": 2048}]})";
  const auto differs = Crest("jobs submit --spec " + spec + " --gpu a100");
  EXPECT_EQ(differs.exit_code, 2);
  EXPECT_NE(differs.err.find("gpu: --gpu a100 differs from the spec's \"gpu\": h100"),
            std::string::npos)
      << differs.err;
}

TEST_F(CrestRemote, JobsSubmitListShowWatchCancelAndExportAndInfo) {
  const auto submit = Crest("jobs submit --hidden 4096 --gpu h100 --window 8 --priority 5 --wait");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("job 1: done, 34/34 GEMMs"), std::string::npos) << submit.out;
  const auto list = Crest("jobs list");
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("done"), std::string::npos) << list.out;
  // A job reads as every other document: numbers are numbers, the state
  // is the store's name, the spec an object (not the proto3 JSON mapping's
  // strings and JOB_STATE_DONE).
  const auto show = nlohmann::json::parse(Crest("--json jobs show 1").out);
  EXPECT_EQ(show["priority"], 5);
  EXPECT_EQ(show["id"], 1);
  EXPECT_EQ(show["state"], "done");
  EXPECT_TRUE(show["created_us"].is_number_integer()) << show.dump();
  EXPECT_TRUE(show["finished_us"].is_number_integer()) << show.dump();
  EXPECT_EQ(show["total"], 34);
  EXPECT_EQ(show["spec"]["dff"][0]["hidden"], 4096);
  const auto listed = nlohmann::json::parse(Crest("--json jobs list").out);
  ASSERT_EQ(listed["jobs"].size(), 1u);
  EXPECT_EQ(listed["jobs"][0]["state"], "done");
  const auto watched = nlohmann::json::parse(Crest("--json jobs watch 1").out);
  EXPECT_EQ(watched["job"]["state"], "done");
  EXPECT_TRUE(watched["final"].get<bool>());
  const auto watch = Crest("jobs watch 1");
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  const auto cancel = Crest("jobs cancel 1");
  EXPECT_EQ(cancel.exit_code, 1);
  EXPECT_NE(cancel.err.find("already ended"), std::string::npos) << cancel.err;
  // A well-formed id the node has no job for is nothing known (exit 1), not
  // bad input (exit 2), for each command that names a job.
  for (const char* command : {"jobs show 99", "jobs watch 99", "jobs cancel 99"}) {
    const auto missing = Crest(command);
    EXPECT_EQ(missing.exit_code, 1) << command << ": " << missing.err;
    EXPECT_NE(missing.err.find("job 99 not found"), std::string::npos) << missing.err;
  }

  const auto exported = Crest("db export --out " + dir_.File("snap.db"));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto stats =
      testing::RunCommand(std::string(CREST_BIN) + " --json db stats --db " + dir_.File("snap.db"));
  EXPECT_NE(stats.out.find("\"predictions\": 34"), std::string::npos) << stats.out;
  const auto again = Crest("db export --out " + dir_.File("snap.db"));
  EXPECT_NE(again.exit_code, 0) << "an existing file is never overwritten";

  const auto info = Crest("info");
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("34 predictions"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("jobs: done=1"), std::string::npos) << info.out;
}

// `crest sweep --server` reports as `crest sweep --db` does: one report
// type, the same keys and, where they do not depend on where or when the
// sweep ran, the same values.
TEST_F(CrestRemote, ASweepOnTheDaemonReportsAsALocalSweepDoes) {
  const std::string window = " sweep --hidden 4096 --gpu h100 --window 8";
  const auto remote = Crest("--json" + window);
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  const auto local = testing::RunCommand(std::string(CREST_BIN) + " --json" + window + " --db " +
                                         dir_.File("local.db"));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  auto r = nlohmann::json::parse(remote.out);
  auto l = nlohmann::json::parse(local.out);
  EXPECT_EQ(r["server"], daemon_.address());
  EXPECT_TRUE(r["db"].is_null());
  EXPECT_EQ(l["db"], dir_.File("local.db"));
  EXPECT_TRUE(l["server"].is_null());
  for (auto* doc : {&r, &l}) {  // where, when and how fast it ran
    for (const char* key :
         {"db", "server", "job", "elapsed_s", "gemms_per_s", "kernel_s", "gemms_per_minute",
          "gpu_busy_fraction", "host_overhead_per_gemm_s", "host_per_gemm"}) {
      ASSERT_TRUE(doc->contains(key)) << key << " in " << doc->dump();
      doc->erase(key);
    }
  }
  EXPECT_EQ(r, l) << "one report, local or remote";
  EXPECT_EQ(r["backend"], "model");
  EXPECT_GT(r["new_results"].get<int>(), 0);

  const auto text = Crest("sweep --hidden 4096 --gpu h100 --window 8");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("GEMMs in crestd at " + daemon_.address() +
                          "\n  0 new predictions, 34 already in the database, 0 failed"),
            std::string::npos)
      << "a sweep again finds the daemon's database holding it:\n"
      << text.out;
}

// Every --json document from a daemon's answer starts with schema_version,
// as local ones do, so a script can check what it reads.
TEST_F(CrestRemote, EveryJsonDocumentCarriesTheSchemaVersion) {
  const char* commands[] = {
      "info",
      "sweep --hidden 4096 --gpu h100 --window 8",
      "jobs submit --hidden 4096 --gpu h100 --window 4",
      "jobs submit --hidden 4096 --gpu h100 --window 2 --wait",
      "jobs list",
      "jobs show 1",
      "jobs watch 1",
      "dff --hidden 4096 --gpu h100 --window 8",
      "lookup --m 8192 --n 4096 --k 10922 --gpu h100",
  };
  for (const char* command : commands) {
    const auto r = Crest(std::string("--json ") + command);
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    const auto doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(doc.is_object()) << command << ": " << r.out;
    EXPECT_EQ(doc.value("schema_version", 0), 1) << command << ": " << r.out;
  }
}

TEST_F(CrestRemote, ErrorsNameTheServerOrTheFlag) {
  const auto bad = Crest("sweep --hidden 4096 --gpu h300");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("h300"), std::string::npos) << bad.err;
  const auto both = Crest("dff --hidden 4096 --gpu h100 --db x.db");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--db or --server, not both"), std::string::npos) << both.err;
  const auto no_server = testing::RunCommand(std::string(CREST_BIN) + " jobs list");
  EXPECT_EQ(no_server.exit_code, 2);
  EXPECT_NE(no_server.err.find("--server"), std::string::npos) << no_server.err;
  daemon_.Stop(SIGTERM);
  const auto down = Crest("--timeout 2 dff --hidden 4096 --gpu h100");
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("crestd at " + daemon_.address()), std::string::npos) << down.err;
}

// `crest compare` through a crestd answers as from its database file.
TEST_F(CrestRemote, CompareThroughTheDaemonEqualsTheLocalComparison) {
  const std::string db = dir_.File("crest.db");
  testing::WriteSlowedMlpTable(dir_.File("slowed.csv"));
  for (const std::string& args :
       {testing::ReplaySweepArgs(db, testing::kMlpTable, 130100),
        testing::ReplaySweepArgs(db, dir_.File("slowed.csv"), 130200) + " --revalidate"}) {
    const auto sweep = testing::RunCommand(std::string(CREST_BIN) + " " + args);
    ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  }
  const std::string query = " compare --base cublaslt:130100 --new cublaslt:130200";
  const auto remote = Crest("--json" + query + " --fail-on-regression");
  EXPECT_EQ(remote.exit_code, 3) << remote.err;
  const auto local =
      testing::RunCommand(std::string(CREST_BIN) + " --json" + query + " --db " + db);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  auto r = nlohmann::json::parse(remote.out);
  auto l = nlohmann::json::parse(local.out);
  EXPECT_EQ(r["origin"], "crestd at " + daemon_.address());
  r.erase("origin");
  l.erase("origin");
  EXPECT_EQ(r, l) << "one answer, local or remote";
  EXPECT_EQ(r["summary"]["slower"], 4);
  const auto exact = Crest("--json" + query + " --threshold 0");
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_EQ(nlohmann::json::parse(exact.out)["threshold"], 0.0)
      << "a threshold of 0 is the client's, not the server's default";
  const auto bad = Crest(" compare --base job:1 --new date:2026-13-01");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace crest

namespace crest {
namespace {

// crestd ends a stream with nothing to send for --stream-idle-timeout (issue
// 40); `crest jobs watch` of a job that waits longer watches it again, and
// ends when the job does.
TEST_F(CrestRemote, WatchingAJobQueuedLongerThanTheIdleTimeoutWatchesAgainUntilItEnds) {
  ASSERT_NE(daemon_.Stop(SIGTERM), -1);
  std::string why;
  ASSERT_TRUE(daemon_.Start(CRESTD_BIN, dir_.path(), {"--stream-idle-timeout", "1"}, &why)) << why;
  // 180,000 model GEMMs ahead: seconds of work even with batched commits,
  // while job 2 waits.
  testing::WriteBytes(dir_.File("ahead.json"),
                      R"({"gpu": "h100", "gemms": [{"m": {"from": 1, "to": 400}, )"
                      R"("n": {"from": 1, "to": 450}, "k": 64}]})");
  ASSERT_EQ(Crest("jobs submit --spec " + dir_.File("ahead.json")).exit_code, 0);
  ASSERT_EQ(Crest("jobs submit --hidden 4096 --gpu h100 --window 8").exit_code, 0);
  const auto watch = Crest("jobs watch 2");
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_NE(watch.out.find("done"), std::string::npos) << watch.out;
  const std::string log = daemon_.log();
  EXPECT_NE(log.find("idle_stream"), std::string::npos)
      << "the job waited longer than the idle timeout: the watch was cut and began again";
}

}  // namespace
}  // namespace crest
