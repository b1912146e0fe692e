// A revalidation after a library upgrade: GEMMs stored under another
// cuBLASLt version are re-timed with their stored top algorithms (and the
// library's first choice) instead of a full search, stored under the new
// version, and compared old against new.
#include <string>

#include "crest/sweep/runner.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::sweep {
namespace {

using crest::testing::FakeMeasuringBackend;
using crest::testing::OpenSweepDb;
using crest::testing::Spec;
using crest::testing::TempDir;

constexpr char kStored[] =
    R"({"gpu": "h100", "gemms": [{"name": "g", "m": 4096, "n": 4096, "k": [4096, 8192, 10944]}]})";
constexpr char kRevalidate[] =
    R"({"gpu": "h100", "revalidate": true,
        "gemms": [{"name": "g", "m": 4096, "n": 4096, "k": [4096, 8192, 10944, 12288]}]})";

bool Has(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// Three GEMMs measured under cuBLASLt 130100.
void StoreUnderTheOldLibrary(store::Store& db) {
  FakeMeasuringBackend old_library;
  old_library.cublaslt = 130100;
  ASSERT_TRUE(RunSweep(Spec(kStored), old_library, db, {}).ok());
}

TEST(Revalidate, ReTimesTheStoredTopAlgorithmsUnderTheNewVersionAndComparesOldWithNew) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  StoreUnderTheOldLibrary(*db);
  FakeMeasuringBackend new_library;
  new_library.cublaslt = 130200;
  new_library.slowdown = 1.2;  // the upgrade made every GEMM slower
  auto out = RunSweep(Spec(kRevalidate), new_library, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->revalidation.has_value());
  EXPECT_EQ(out->revalidation->retimed, 3);
  EXPECT_EQ(out->revalidation->searched, 1) << "k=12288 was never stored: searched in full";
  ASSERT_EQ(new_library.retimed_algos.size(), 3u);
  for (const auto& ids : new_library.retimed_algos) {
    EXPECT_EQ(ids, (std::vector<int64_t>{20, 21})) << "the stored algorithms, fastest first";
  }
  const auto& lines = out->revalidation->lines;
  EXPECT_TRUE(Has(lines, "re-timed 3 GEMMs")) << lines[0];
  EXPECT_TRUE(Has(lines, "3 slower, 0 unresolved, 0 same, 0 faster of 3 GEMMs")) << lines[1];
  EXPECT_EQ(out->job.state, store::JobState::kDone);
  EXPECT_EQ(out->progress.done, 4) << "every GEMM stored under the new version";
}

TEST(Revalidate, OnEqualTimesReportsNoChange) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  StoreUnderTheOldLibrary(*db);
  FakeMeasuringBackend new_library;
  new_library.cublaslt = 130200;
  auto out = RunSweep(Spec(kRevalidate), new_library, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(Has(out->revalidation->lines, "0 slower, 0 unresolved, 3 same, 0 faster"))
      << out->revalidation->lines[1];
}

TEST(Revalidate, IsRefusedWhereNothingIsMeasuredAndWithAnAdaptivePlan) {
  auto s = CheckPlan(Spec(kRevalidate), /*measures=*/false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()).find("revalidate:"), 0u) << s;
  auto adaptive = ParseSweepSpec(
      R"({"gpu": "h100", "plan": "adaptive", "revalidate": true, "dff": [{"hidden": 4096}]})");
  ASSERT_FALSE(adaptive.ok());
  EXPECT_NE(std::string(adaptive.status().message()).find("spec.revalidate"), std::string::npos);
  EXPECT_FALSE(
      ParseSweepSpec(R"({"gpu": "h100", "revalidate": 1, "dff": [{"hidden": 4096}]})").ok());
}

}  // namespace
}  // namespace crest::sweep
