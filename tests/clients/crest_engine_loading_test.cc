// The measuring engine (libcrest_cublaslt.so, and cuBLASLt with it) is
// loaded only by what measures or reports on it: a predicting command
// never maps cuBLASLt, `crest doctor` still reports the CUDA libraries,
// and an engine that cannot be found or loaded is named with the reason.
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_command.h"
#include "temp_dir.h"

namespace crest {
namespace {

std::string Crest(const std::string& args) { return std::string(CREST_BIN) + " " + args; }

// The loader's list of the files it opened (glibc's LD_DEBUG=files).
testing::CommandResult Traced(const std::string& command) {
  return testing::RunCommand("LD_DEBUG=files " + command);
}

nlohmann::json CudaLibsCheck(const std::string& out) {
  const auto report = nlohmann::json::parse(out, nullptr, false);
  if (!report.is_object()) return nullptr;
  for (const auto& c : report["checks"]) {
    if (c["name"] == "cuda-libs") return c;
  }
  return nullptr;
}

TEST(EngineLoading, PredictingCommandsNeverLoadCuBlasLt) {
  for (const std::string args : {"--version", "dff --hidden 4096 --gpu h100", "info"}) {
    const auto r = Traced(Crest(args));
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.out;
    EXPECT_EQ(r.err.find("libcublasLt"), std::string::npos) << args << " loaded cuBLASLt";
    EXPECT_EQ(r.err.find("libcrest_cublaslt"), std::string::npos) << args << " loaded the engine";
  }
}

TEST(EngineLoading, DoctorLoadsTheEngineAndReportsTheCudaLibraries) {
  if (!CREST_CUDA_BUILT) GTEST_SKIP() << "this build has no CUDA parts, so no engine to load";
  testing::TempDir dir;
  const auto r = Traced(Crest("--json doctor --no-daemon --state-dir " + dir.path()));
  const auto check = CudaLibsCheck(r.out);
  ASSERT_FALSE(check.is_null()) << r.out;
  EXPECT_EQ(check["verdict"], "ok") << check.dump();
  const std::string detail = check["detail"];
  EXPECT_NE(detail.find("libcrest_cublaslt.so"), std::string::npos) << detail;
  EXPECT_NE(detail.find("cuBLASLt 13"), std::string::npos) << detail;
  EXPECT_NE(r.err.find("libcublasLt"), std::string::npos) << "doctor did not load cuBLASLt";
}

TEST(EngineLoading, AnEngineThatCannotBeFoundOrLoadedIsNamedWithTheReason) {
  if (!CREST_CUDA_BUILT) GTEST_SKIP() << "this build has no CUDA parts, so no engine to load";
  testing::TempDir dir;
  const std::string missing = dir.File("missing.so");
  auto r = testing::RunCommand("CREST_CUBLASLT_LIBRARY=" + missing + " " +
                               Crest("--json doctor --no-daemon --state-dir " + dir.path()));
  auto check = CudaLibsCheck(r.out);
  ASSERT_FALSE(check.is_null()) << r.out << r.err;
  EXPECT_EQ(check["verdict"], "FAIL");
  EXPECT_NE(check["detail"].get<std::string>().find("was not found (looked for " + missing + ")"),
            std::string::npos)
      << check.dump();
  EXPECT_EQ(r.exit_code, 1);

  const std::string bogus = dir.File("bogus.so");
  std::ofstream(bogus) << "not a shared library\n";
  r = testing::RunCommand("CREST_CUBLASLT_LIBRARY=" + bogus + " " +
                          Crest("--json doctor --no-daemon --state-dir " + dir.path()));
  check = CudaLibsCheck(r.out);
  ASSERT_FALSE(check.is_null()) << r.out << r.err;
  EXPECT_EQ(check["verdict"], "FAIL");
  EXPECT_NE(check["detail"].get<std::string>().find(bogus + " cannot be loaded: "),
            std::string::npos)
      << check.dump();
}

}  // namespace
}  // namespace crest
