#include "crest/service/sweep_runner.h"

#include "crest/service/store_answers.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest::service {
namespace {

using crest::testing::TempDir;

// A measuring backend with scripted results: GEMM time grows with K, and
// K = 10944 is fast. Fails GEMMs whose K is in `failing`.
class FakeMeasuringBackend final : public Backend {
 public:
  std::set<int64_t> failing;
  int runs = 0;

  std::string uuid = "GPU-fake-0";
  double slowdown = 1;  // this device's times, relative to the script

  std::string_view Name() const override { return "fake-gpu"; }
  bool Measures() const override { return true; }
  const GpuSpec& Gpu() const override { return **FindGpu("h100"); }
  DeviceInfo Device() const override { return crest::testing::FakeH100(uuid); }
  SoftwareInfo Software() const override { return crest::testing::FakeSoftware(); }
  absl::StatusOr<GemmOutcome> Run(const GemmShape& g) override {
    ++runs;
    if (failing.contains(g.k)) return absl::ResourceExhaustedError("out of device memory");
    const double us = (g.k == 10944 || g.n == 2 * 10944) ? 100 : 200 + static_cast<double>(g.k % 7);
    GemmOutcome out;
    out.measured = crest::testing::FakeMeasurement(g, us * slowdown, 2);
    return out;
  }
};

SweepSpec Spec(const std::string& json) {
  auto spec = ParseSweepSpec(json);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// Every d_ff candidate within ±window of 8/3·hidden, unranked.
DffQuery EveryCandidate(int64_t hidden, int64_t window) {
  DffQuery q;
  q.hidden = hidden;
  q.ratio = *ParseRatio("8/3");
  q.window = window;
  q.top = 0;
  return q;
}

std::unique_ptr<store::Store> Open(const TempDir& dir) {
  store::StoreOptions options;
  options.host = "node0";
  options.synchronous_full = false;
  auto db = store::Store::Open(dir.File("s.db"), options);
  EXPECT_TRUE(db.ok()) << db.status();
  return *std::move(db);
}

TEST(RunSweep, ModelBackendWritesEveryPredictionOnceAndResumesToNothing) {
  TempDir dir;
  auto db = Open(dir);
  auto backend = MakeModelBackend(**FindGpu("h100"));
  const SweepSpec spec = Spec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 8}]})");
  auto first = RunSweep(spec, *backend, *db, {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->job.state, store::JobState::kDone);
  EXPECT_EQ(first->progress.new_results, 34);
  EXPECT_EQ(first->job.done, 34);
  auto second = RunSweep(spec, *backend, *db, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->progress.new_results, 0);
  EXPECT_EQ(second->already_present, 34);
  EXPECT_EQ(db->Stats()->predictions, 34);
}

TEST(RunSweep, FailedGemmsLeaveTheJobFailedAndTheRerunResumesIt) {
  TempDir dir;
  auto db = Open(dir);
  FakeMeasuringBackend backend;
  backend.failing = {10920, 10921};
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 4}]})");
  auto first = RunSweep(spec, backend, *db, {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->job.state, store::JobState::kFailed);
  EXPECT_EQ(first->progress.failed, 2);
  EXPECT_NE(first->job.error.find("out of device memory"), std::string::npos) << first->job.error;
  EXPECT_EQ(first->job.done, 16);

  backend.failing.clear();
  backend.runs = 0;
  auto second = RunSweep(spec, backend, *db, {});
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->resumed);
  EXPECT_EQ(second->job.id, first->job.id);
  EXPECT_EQ(second->job.state, store::JobState::kDone);
  EXPECT_EQ(backend.runs, 2) << "only the two failed GEMMs run again";
  EXPECT_EQ(second->job.done, 18);
  EXPECT_EQ(db->Stats()->measurements, 18 * 2);
}

TEST(RunSweep, ForceMeasuresAgainAndCancelStopsBetweenGemms) {
  TempDir dir;
  auto db = Open(dir);
  FakeMeasuringBackend backend;
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})");
  ASSERT_TRUE(RunSweep(spec, backend, *db, {}).ok());
  SweepOptions force;
  force.force = true;
  ASSERT_TRUE(RunSweep(spec, backend, *db, force).ok());
  EXPECT_EQ(db->Stats()->measurements, 2 * 10 * 2);

  std::atomic<bool> cancel{false};
  SweepOptions cancelling;
  cancelling.force = true;
  cancelling.cancel = &cancel;
  cancelling.on_progress = [&](const SweepProgress& p) {
    if (p.new_results == 3) cancel = true;
  };
  auto cancelled = RunSweep(spec, backend, *db, cancelling);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->job.state, store::JobState::kCancelled);
  EXPECT_EQ(cancelled->progress.new_results, 3);
}

TEST(RankDffFromStore, MeasuredCandidatesWinOverPredictionsAndCoverageIsCounted) {
  TempDir dir;
  auto db = Open(dir);
  // Predictions for the whole ±8 window; measurements for ±4 only.
  auto model = MakeModelBackend(**FindGpu("h100"));
  ASSERT_TRUE(
      RunSweep(Spec(R"({"gpu":"h100","dff":[{"hidden":4096,"window":8}]})"), *model, *db, {}).ok());
  FakeMeasuringBackend gpu;
  ASSERT_TRUE(RunSweep(Spec(R"({"dff":[{"hidden":4096,"window":4}]})"), gpu, *db, {}).ok());

  auto r = RankDffFromStore(EveryCandidate(4096, 16), **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->measured, 9);
  EXPECT_EQ(r->predicted, 8);
  EXPECT_EQ(r->missing, 16);
  ASSERT_TRUE(r->baseline_found);
  EXPECT_EQ(r->baseline.source, "measured");
  for (const DffRow& row : r->rows) {
    const bool in_measured_window = row.d_ff >= 10918 && row.d_ff <= 10926;
    EXPECT_EQ(row.source, in_measured_window ? "measured" : "predicted") << row.d_ff;
    if (row.source == "measured") {
      EXPECT_EQ(row.device.uuid, "GPU-fake-0");
    }
  }
}

TEST(RankDffFromStore, SeveralDevicesAnswerWithTheMedianDeviceAndSaySo) {
  TempDir dir;
  auto db = Open(dir);
  // Three devices of one model (as in a merged catalogue): 1x, 3x, 2x.
  const double slowdowns[] = {1, 3, 2};
  for (int i = 0; i < 3; ++i) {
    FakeMeasuringBackend gpu;
    gpu.uuid = "GPU-fake-" + std::to_string(i);
    gpu.slowdown = slowdowns[i];
    ASSERT_TRUE(RunSweep(Spec(R"({"dff":[{"hidden":4096,"window":1}]})"), gpu, *db, {}).ok());
  }
  auto r = RankDffFromStore(EveryCandidate(4096, 1), **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->rows.empty());
  for (const DffRow& row : r->rows) {
    EXPECT_EQ(row.source, "measured");
    EXPECT_EQ(row.device.uuid, "GPU-fake-2") << "the 2x device is the median";
    EXPECT_NE(row.provenance.find("the median of 3 devices' best times"), std::string::npos)
        << row.provenance;
  }
}

TEST(RankDffFromStore, EmptyDatabaseAnswersNothingAndSaysSo) {
  TempDir dir;
  auto db = Open(dir);
  DffQuery q;
  q.hidden = 4096;
  q.ratio = *ParseRatio("8/3");
  auto r = RankDffFromStore(q, **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->rows.empty());
  EXPECT_FALSE(r->baseline_found);
  EXPECT_EQ(r->missing, 257);
}

}  // namespace
}  // namespace crest::service
