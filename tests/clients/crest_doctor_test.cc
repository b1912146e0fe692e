// `crest doctor`: each check reports ok or FAIL with its reason, and the
// exit status says whether any failed.
#include <string>

#include "crestd_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

std::string Crest(const std::string& args) { return std::string(CREST_BIN) + " " + args; }

// The check called `name` in a --json report, or null.
nlohmann::json Find(const nlohmann::json& report, const std::string& name) {
  for (const auto& c : report["checks"]) {
    if (c["name"] == name) return c;
  }
  return nullptr;
}

TEST(CrestDoctor, AWritableStateDirAndARunningDaemonPassAndTheExitIsZero) {
  testing::TempDir dir;
  testing::CrestdProcess daemon;
  std::string why;
  ASSERT_TRUE(daemon.Start(CRESTD_BIN, dir.path(), {}, &why)) << why;
  // --no-gpu: this machine may have no GPU; every remaining check must pass.
  const auto r = testing::RunCommand(
      Crest("--json --server " + daemon.address() + " doctor --no-gpu --state-dir " + dir.path()));
  const auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out << r.err;
  EXPECT_EQ(Find(report, "state-dir")["verdict"], "ok") << r.out;
  // The daemon's own database is opened and described.
  EXPECT_NE(Find(report, "state-dir")["detail"].get<std::string>().find("crest.db: schema"),
            std::string::npos)
      << r.out;
  const auto daemon_check = Find(report, "daemon");
  EXPECT_NE(daemon_check["detail"].get<std::string>().find("at " + daemon.address()),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Find(report, "build")["verdict"], "ok") << r.out;
  EXPECT_TRUE(Find(report, "driver").is_null()) << "--no-gpu skips it: " << r.out;
  for (const auto& c : report["checks"]) EXPECT_NE(c["verdict"], "FAIL") << c.dump();
  EXPECT_EQ(r.exit_code, 0) << "no check failed, so the exit is 0: " << r.out << r.err;
}

TEST(CrestDoctor, AMissingStateDirAndAnUnreachableDaemonFailNamingThem) {
  testing::TempDir dir;
  const auto r =
      testing::RunCommand(Crest("--server 127.0.0.1:1 doctor --state-dir " + dir.File("missing")));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL  state-dir  " + dir.File("missing") + ": not a directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL  daemon     crestd at 127.0.0.1:1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("check(s) failed"), std::string::npos) << r.err;
}

// A node that only predicts is told what it is (not) ready for: predicting,
// never "cannot measure", which --no-gpu did not check.
TEST(CrestDoctor, NoGpuSaysThePurposeItChecked) {
  testing::TempDir dir;
  const auto failed =
      testing::RunCommand(Crest("doctor --no-gpu --no-daemon --state-dir " + dir.File("missing")));
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(failed.err.find("measure"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("cannot predict (GPU checks skipped: --no-gpu) yet"), std::string::npos)
      << failed.err;
  const auto ok =
      testing::RunCommand(Crest("--json doctor --no-gpu --no-daemon --state-dir " + dir.path()));
  const auto report = nlohmann::json::parse(ok.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << ok.out << ok.err;
  EXPECT_EQ(report["purpose"], "predict");
  EXPECT_EQ(report["ready"], true);
  const auto text =
      testing::RunCommand(Crest("doctor --no-gpu --no-daemon --state-dir " + dir.path()));
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("this node is ready to predict"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("measure"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace crest
