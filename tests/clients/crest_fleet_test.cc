// `crest fleet`: one sweep on three real crestd, one of which dies midway;
// the survivors' results merge into a catalogue, the dead node is reported,
// and merging again changes nothing. A fleet with one node's GPU slowed: the
// pull names it, and `crest compare --fleet` on the catalogue agrees.
#include <netdb.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "crestd_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "replay_tables.h"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

std::string Crest(const std::string& args) { return std::string(CREST_BIN) + " " + args; }

// The job `id`'s state on `daemon`, or -1 when it cannot be asked.
int JobState(const testing::CrestdProcess& daemon, int64_t id) {
  auto stub = daemon.Stub();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetJobRequest request;
  request.set_id(id);
  v1::Job job;
  if (!stub->GetJob(&context, request, &job).ok()) return -1;
  return job.state();
}

nlohmann::json Stats(const std::string& db) {
  const auto r = testing::RunCommand(Crest("--json db stats --db " + db));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

// --gpu names the target of a spec file that leaves it out, on every node.
TEST(CrestFleet, SubmitTakesGpuWithASpecFile) {
  testing::TempDir dir;
  testing::CrestdProcess node;
  std::string why;
  ASSERT_TRUE(node.Start(CRESTD_TESTING_BIN, dir.path(), {}, &why)) << why;
  const std::string spec = dir.File("no-gpu.json");
  std::ofstream(spec) << R"({"version": 1, "dff": [{"hidden": 2048, "window": 2}]})";
  const auto submit = testing::RunCommand(
      Crest("fleet submit --targets " + node.address() + " --spec " + spec + " --gpu h100"));
  EXPECT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  EXPECT_EQ(JobState(node, 1), v1::JOB_STATE_DONE);
}

TEST(CrestFleet, SubmitAndPullMergeTheSurvivorsReportTheDeadNodeAndMergeIdempotently) {
  testing::TempDir dir;
  testing::CrestdProcess nodes[3];
  std::string why;
  // The third node is slow, so that it is still sweeping when it dies.
  const char* delays[3] = {"5", "5", "400"};
  for (int i = 0; i < 3; ++i) {
    const std::string state = dir.File("node" + std::to_string(i));
    std::filesystem::create_directories(state);
    ASSERT_TRUE(
        nodes[i].Start(CRESTD_TESTING_BIN, state, {"--model-gemm-delay-ms", delays[i]}, &why))
        << why;
  }
  const std::string targets =
      nodes[0].address() + "," + nodes[1].address() + "," + nodes[2].address();

  testing::CommandResult submit;
  std::thread fleet([&] {
    submit = testing::RunCommand(Crest("fleet submit --targets " + targets +
                                       " --hidden 4096 --gpu h100 --window 8 --poll 0.2 "
                                       "--give-up-after 1"));
  });
  // Kill the third node once its job runs (each daemon's first job is job 1).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (JobState(nodes[2], 1) != v1::JOB_STATE_RUNNING &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(JobState(nodes[2], 1), v1::JOB_STATE_RUNNING);
  nodes[2].Stop(SIGKILL);
  fleet.join();

  EXPECT_EQ(submit.exit_code, 1) << submit.out << submit.err;
  EXPECT_NE(submit.err.find("done on 2 of 3 nodes; not on " + nodes[2].address()),
            std::string::npos)
      << submit.err;
  EXPECT_NE(submit.out.find("gave up after"), std::string::npos) << submit.out;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(JobState(nodes[i], 1), v1::JOB_STATE_DONE) << "node " << i;
  }

  const std::string catalogue = dir.File("catalogue.db");
  const auto pull =
      testing::RunCommand(Crest("fleet pull --targets " + targets + " --into " + catalogue));
  EXPECT_EQ(pull.exit_code, 1) << pull.out << pull.err;
  EXPECT_NE(pull.err.find("merged on 2 of 3 nodes; not on " + nodes[2].address()),
            std::string::npos)
      << pull.err;
  const nlohmann::json first = Stats(catalogue);
  EXPECT_EQ(first["jobs_by_state"]["done"], 2) << first.dump();
  EXPECT_EQ(first["predictions"], 34) << "both nodes predicted the same 34 GEMMs: " << first.dump();

  const auto again = testing::RunCommand(Crest("--json fleet pull --targets " + nodes[0].address() +
                                               "," + nodes[1].address() + " --into " + catalogue));
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  const auto report = nlohmann::json::parse(again.out, nullptr, false);
  ASSERT_EQ(report["nodes"].size(), 2u) << again.out;
  for (const auto& node : report["nodes"]) {
    EXPECT_EQ(node["merged"]["predictions"], 0) << node.dump();
    EXPECT_EQ(node["merged"]["jobs"], 0) << node.dump();
    EXPECT_EQ(node["merged"]["measurements"], 0) << node.dump();
    EXPECT_GT(node["bytes"].get<int64_t>(), 0) << node.dump();
  }
  const nlohmann::json second = Stats(catalogue);
  for (const char* field : {"predictions", "measurements", "jobs_by_state", "devices"}) {
    EXPECT_EQ(first[field], second[field]) << field;
  }

  // The catalogue answers offline, like any node's database.
  const auto dff = testing::RunCommand(
      Crest("dff --db " + catalogue + " --hidden 4096 --gpu h100 --window 8 --top 3"));
  EXPECT_EQ(dff.exit_code, 0) << dff.err;
  EXPECT_NE(dff.out.find("rank"), std::string::npos) << dff.out;
}

// Four nodes whose databases hold replayed runs of the shipped H100 table,
// the fourth's 10% slower (a throttled GPU).
TEST(CrestFleet, PullNamesTheNodeWhoseGpuIsSlowerThanTheFleetAndNoOther) {
  testing::TempDir dir;
  const std::string throttled = dir.File("throttled.csv");
  testing::WriteScaledMlpTable(throttled, [](const std::vector<std::string>&) { return 1.10; });
  testing::CrestdProcess nodes[4];
  std::string targets;
  for (int i = 0; i < 4; ++i) {
    const std::string state = dir.File("node" + std::to_string(i));
    std::filesystem::create_directories(state);
    const auto sweep = testing::RunCommand(
        Crest(testing::ReplaySweepArgs(state + "/crest.db", i == 3 ? throttled : testing::kMlpTable,
                                       130100) +
              " --replay-seed " + std::to_string(i + 1)));
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
    std::string why;
    ASSERT_TRUE(nodes[i].Start(CRESTD_TESTING_BIN, state, {}, &why)) << why;
    targets += (i ? "," : "") + nodes[i].address();
  }
  const std::string catalogue = dir.File("catalogue.db");
  const auto pull = testing::RunCommand(
      Crest("--json fleet pull --fail-on-slow --targets " + targets + " --into " + catalogue));
  EXPECT_EQ(pull.exit_code, 3) << "a device slower than its fleet\n" << pull.out << pull.err;
  const auto report = nlohmann::json::parse(pull.out, nullptr, false);
  const auto& devices = report["fleet_health"]["devices"];
  ASSERT_EQ(devices.size(), 4u) << pull.out;
  EXPECT_EQ(devices[0]["verdict"], "slower") << devices[0].dump();
  EXPECT_NEAR(devices[0]["ratio"].get<double>(), 1.10, 0.02);
  EXPECT_EQ(devices[0]["gemms"], 514);
  EXPECT_GT(devices[0]["slowest"].size(), 0u);
  EXPECT_TRUE(devices[0]["replayed"].get<bool>());
  for (size_t i = 1; i < devices.size(); ++i) {
    EXPECT_NE(devices[i]["verdict"], "slower") << devices[i].dump();
  }
  const std::string slow = devices[0]["device_uuid"];

  const auto text =
      testing::RunCommand(Crest("compare --fleet --db " + catalogue + " --fail-on-regression"));
  EXPECT_EQ(text.exit_code, 3) << text.out << text.err;
  EXPECT_NE(text.out.find("REPLAYED (not measured): 1 of 4 devices slower"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("slower: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("newest run per GEMM (cold L2, sustained clocks; each GEMM's fastest "
                          "verified algorithm)"),
            std::string::npos)
      << "how the figures were measured: " << text.out;
  EXPECT_NE(text.out.find("a GEMM's own verdict (slower GEMMs) carries no stated error rate"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(slow), std::string::npos) << text.out;
  const auto csv = testing::RunCommand(Crest("--csv compare --fleet --db " + catalogue));
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("gpu_model,cublaslt,host,device_uuid,gemms,", 0), 0u) << csv.out;

  const auto bad =
      testing::RunCommand(Crest("compare --fleet --db " + catalogue + " --base all --new all"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("fleet: --fleet sets every device"), std::string::npos) << bad.err;
  const auto unknown =
      testing::RunCommand(Crest("compare --fleet --db " + catalogue + " --gpu nope"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("error: gpu: unknown GPU 'nope' (known: "), std::string::npos)
      << unknown.err;
  const auto gpu =
      testing::RunCommand(Crest("compare --db " + catalogue + " --base all --new all --gpu h100"));
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err.find("gpu: --gpu goes with --fleet"), std::string::npos) << gpu.err;
}

TEST(CrestFleet, BadInputIsRefusedNamingTheFlagBeforeAnyNodeIsAsked) {
  const auto bad = testing::RunCommand(Crest("fleet pull --targets host-without-port --into x.db"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--targets: 'host-without-port' is not HOST:PORT"), std::string::npos)
      << bad.err;
  const auto both = testing::RunCommand(
      Crest("fleet submit --targets a:1 --targets-dns b --hidden 4096 --gpu h100"));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("exactly one of --targets"), std::string::npos) << both.err;
  const auto nowhere =
      testing::RunCommand(Crest("fleet pull --targets-dns no-such-host.invalid --into x.db"));
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_NE(nowhere.err.find("'no-such-host.invalid' does not resolve"), std::string::npos)
      << nowhere.err;

  testing::TempDir dir;
  const std::string spec = dir.File("bad.json");
  std::FILE* file = std::fopen(spec.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs(R"({"version": 1, "dff": [{"hidden": 4096, "windw": 3}]})", file);
  std::fclose(file);
  // Port 1 has no daemon: a node that was asked would be reported instead.
  const auto typo = testing::RunCommand(Crest("fleet submit --targets 127.0.0.1:1 --spec " + spec));
  EXPECT_EQ(typo.exit_code, 2) << typo.out << typo.err;
  EXPECT_NE(typo.err.find("spec.dff[0]: unknown field 'windw'"), std::string::npos) << typo.err;
  EXPECT_EQ(typo.out, "");

  const std::string junk = dir.File("junk.db");
  file = std::fopen(junk.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs(std::string(5000, 'j').c_str(), file);
  std::fclose(file);
  const auto not_db = testing::RunCommand(Crest("fleet pull --targets 127.0.0.1:1 --into " + junk));
  EXPECT_EQ(not_db.exit_code, 1);
  EXPECT_NE(not_db.err.find(junk + ": not a Crest database"), std::string::npos) << not_db.err;
  EXPECT_EQ(not_db.out, "") << "no node is reported: nothing was downloaded";
}

TEST(CrestFleet, TargetsFromDnsReachTheDaemon) {
  testing::TempDir dir;
  testing::CrestdProcess node;
  std::string why;
  ASSERT_TRUE(node.Start(CRESTD_BIN, dir.path(), {}, &why)) << why;
  const std::string port = std::to_string(node.port());
  // A numeric name resolves without any resolver configuration.
  const auto pull = testing::RunCommand(
      Crest("fleet pull --targets-dns 127.0.0.1:" + port + " --into " + dir.File("cat.db")));
  EXPECT_EQ(pull.exit_code, 0) << pull.out << pull.err;
  EXPECT_NE(pull.out.find("127.0.0.1:" + port), std::string::npos) << pull.out;
  EXPECT_NE(pull.out.find("catalogue: " + dir.File("cat.db") + "\n"), std::string::npos)
      << pull.out;
}

TEST(CrestFleet, TargetsDnsTakesTheAddressesOfAHostName) {
  // Where this machine resolves "localhost" (a bare chroot may have no
  // /etc/hosts). It may also give ::1, where the daemon does not listen: that
  // node is then reported, and 127.0.0.1 still merges.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo("localhost", nullptr, &hints, &found) != 0) {
    GTEST_SKIP() << "'localhost' does not resolve here";
  }
  freeaddrinfo(found);
  testing::TempDir dir;
  testing::CrestdProcess node;
  std::string why;
  ASSERT_TRUE(node.Start(CRESTD_BIN, dir.path(), {}, &why)) << why;
  const std::string port = std::to_string(node.port());
  const auto named = testing::RunCommand(
      Crest("fleet pull --targets-dns localhost:" + port + " --into " + dir.File("cat.db")));
  EXPECT_NE(named.out.find("127.0.0.1:" + port), std::string::npos) << named.out << named.err;
}

}  // namespace
}  // namespace crest
