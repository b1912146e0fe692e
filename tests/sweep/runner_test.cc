#include "crest/sweep/runner.h"

#include <map>

#include "crest/answers/store_answers.h"
#include "crest/tuner/predictor.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "temp_dir.h"

namespace crest::sweep {
namespace {

using answers::RankDffFromStore;
using crest::testing::TempDir;

// A measuring backend with scripted results: GEMM time grows with K, and
// K = 10944 is fast. Fails GEMMs whose K is in `failing`.
class FakeMeasuringBackend final : public Backend {
 public:
  std::set<int64_t> failing;
  int runs = 0;

  std::string uuid = "GPU-fake-0";
  double slowdown = 1;  // this device's times, relative to the script
  MeasureMode mode;     // what its results are keyed by
  std::vector<GemmShape> reserved;  // the plan of the last Reserve

  std::string_view Name() const override { return "fake-gpu"; }
  bool Measures() const override { return true; }
  const GpuSpec& Gpu() const override { return **FindGpu("h100"); }
  DeviceInfo Device() const override { return crest::testing::FakeH100(uuid); }
  SoftwareInfo Software() const override { return crest::testing::FakeSoftware(); }
  MeasureMode Mode() const override { return mode; }
  absl::Status Reserve(std::span<const GemmShape> plan) override {
    reserved.assign(plan.begin(), plan.end());
    return absl::OkStatus();
  }
  absl::StatusOr<GemmOutcome> Run(const GemmShape& g) override {
    ++runs;
    if (failing.contains(g.k)) return absl::ResourceExhaustedError("out of device memory");
    const double us = (g.k == 10944 || g.n == 2 * 10944) ? 100 : 200 + static_cast<double>(g.k % 7);
    GemmOutcome out;
    out.measured = crest::testing::FakeMeasurement(g, us * slowdown, 2);
    out.measured->mode = mode;
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

TEST(RunSweep, AWarmSweepAfterAColdOneMeasuresEverythingAndTheModesNeverMix) {
  TempDir dir;
  auto db = Open(dir);
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})");
  FakeMeasuringBackend cold;
  ASSERT_TRUE(RunSweep(spec, cold, *db, {}).ok());
  FakeMeasuringBackend warm;
  warm.mode.cache = CacheMode::kWarm;
  warm.slowdown = 0.5;  // warm L2: faster, and not comparable
  auto w = RunSweep(spec, warm, *db, {});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->already_present, 0) << "the cold results were taken for warm ones";
  EXPECT_EQ(w->progress.new_results, 10);
  EXPECT_EQ(warm.reserved.size(), 10u);
  FakeMeasuringBackend burst;
  burst.mode.clocks = ClockPolicy::kBurst;
  burst.slowdown = 0.8;
  ASSERT_TRUE(RunSweep(spec, burst, *db, {}).ok());
  EXPECT_EQ(burst.runs, 10);

  DffQuery q = EveryCandidate(4096, 2);
  auto cold_rank = RankDffFromStore(q, **FindGpu("h100"), *db, {});
  q.mode.cache = CacheMode::kWarm;
  auto warm_rank = RankDffFromStore(q, **FindGpu("h100"), *db, {});
  ASSERT_TRUE(cold_rank.ok() && warm_rank.ok());
  ASSERT_EQ(cold_rank->measured, 5);
  ASSERT_EQ(warm_rank->measured, 5);
  for (size_t i = 0; i < cold_rank->rows.size(); ++i) {
    EXPECT_NEAR(warm_rank->rows[i].time_us, 0.5 * cold_rank->rows[i].time_us, 1e-6)
        << "warm and cold times competed";
    EXPECT_NE(cold_rank->rows[i].provenance.find("cold L2, sustained clocks"), std::string::npos)
        << cold_rank->rows[i].provenance;
  }
}

TEST(RunSweep, ReservesTheBackendForTheGemmsItWillRunOnly) {
  TempDir dir;
  auto db = Open(dir);
  FakeMeasuringBackend backend;
  ASSERT_TRUE(RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 1}]})"), backend, *db, {}).ok());
  EXPECT_EQ(backend.reserved.size(), 6u);
  ASSERT_TRUE(RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})"), backend, *db, {}).ok());
  EXPECT_EQ(backend.reserved.size(), 4u) << "GEMMs already measured were planned for";
}

TEST(SweepProgress, AccountsForWhereTheTimeWent) {
  SweepProgress p;
  EXPECT_EQ(p.GemmsPerMinute(), 0);
  EXPECT_EQ(p.HostOverheadPerGemmS(), 0);
  p.elapsed_s = 60;
  p.kernel_s = 48;
  p.new_results = 10;
  p.failed = 2;
  EXPECT_DOUBLE_EQ(p.GemmsPerMinute(), 12);
  EXPECT_DOUBLE_EQ(p.GpuBusyFraction(), 0.8);
  EXPECT_DOUBLE_EQ(p.HostOverheadPerGemmS(), 1.0);
}

TEST(RankDffFromStore, MeasuredRowsCarryTheirIntervalAndAreGroupedIntoTies) {
  TempDir dir;
  auto db = Open(dir);
  FakeMeasuringBackend gpu;  // 10944: 100 µs per GEMM; the rest 200-207 µs
  ASSERT_TRUE(RunSweep(Spec(R"({"dff":[{"hidden":4096,"window":24}]})"), gpu, *db, {}).ok());
  auto r = RankDffFromStore(EveryCandidate(4096, 24), **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 49u);
  const DffRow& best = r->rows.front();
  EXPECT_EQ(best.d_ff, 10944);
  EXPECT_NEAR(best.time_low_us, 0.99 * best.time_us, 1e-6) << "the sum of the GEMMs' intervals";
  EXPECT_NEAR(best.time_high_us, 1.01 * best.time_us, 1e-6);
  EXPECT_EQ(best.tie_group, 1);
  EXPECT_EQ(r->tied_with_best, 1) << "nothing overlaps the clearly faster 10944";
  // The rest differ by at most 6 µs in ~400 with ±1% intervals: one group.
  for (size_t i = 1; i < r->rows.size(); ++i) EXPECT_EQ(r->rows[i].tie_group, 2) << i;
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
  EXPECT_EQ(r->predicted, 24) << "8 from the store, 16 from the model run now";
  EXPECT_EQ(r->missing, 0);
  ASSERT_TRUE(r->baseline_found);
  EXPECT_EQ(r->baseline.source, Source::kMeasured);
  // The kinds are ranked apart: the measured rows first.
  for (size_t i = 0; i < r->rows.size(); ++i) {
    EXPECT_EQ(r->rows[i].source, i < 9 ? Source::kMeasured : Source::kPredicted) << i;
  }
  for (const DffRow& row : r->rows) {
    const bool in_measured_window = row.d_ff >= 10918 && row.d_ff <= 10926;
    EXPECT_EQ(row.source, in_measured_window ? Source::kMeasured : Source::kPredicted) << row.d_ff;
    if (row.source == Source::kMeasured) {
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
    EXPECT_EQ(row.source, Source::kMeasured);
    EXPECT_EQ(row.device.uuid, "GPU-fake-2") << "the 2x device is the median";
    EXPECT_NE(row.provenance.find("the median of 3 devices' best times"), std::string::npos)
        << row.provenance;
  }
}

TEST(RankDffFromStore, AnEmptyDatabaseIsAnsweredByTheModelLabelledPredicted) {
  TempDir dir;
  auto db = Open(dir);
  DffQuery q;
  q.hidden = 4096;
  q.ratio = *ParseRatio("8/3");
  q.top = 0;
  auto r = RankDffFromStore(q, **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 257u);
  EXPECT_TRUE(r->baseline_found);
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->predicted, 257);
  auto model = RankDff(q, PredictorTimer(**FindGpu("h100")));
  ASSERT_TRUE(model.ok());
  for (size_t i = 0; i < r->rows.size(); ++i) {
    EXPECT_EQ(r->rows[i].source, Source::kPredicted);
    EXPECT_EQ(r->rows[i].provenance, ModelVersionFor(**FindGpu("h100"), q.dtype));
    EXPECT_EQ(r->rows[i].d_ff, model->rows[i].d_ff) << "the same model, the same ranking";
  }
}

TEST(RankDffFromStore, MeasuredBaselinePredictedRowsGetSpeedupsAgainstThePredictedBaseline) {
  TempDir dir;
  auto db = Open(dir);
  FakeMeasuringBackend gpu;
  ASSERT_TRUE(RunSweep(Spec(R"({"dff":[{"hidden":4096,"window":0}]})"), gpu, *db, {}).ok());
  auto r = RankDffFromStore(EveryCandidate(4096, 4), **FindGpu("h100"), *db, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->baseline_found);
  EXPECT_EQ(r->baseline.source, Source::kMeasured);
  EXPECT_EQ(r->measured, 1);
  EXPECT_EQ(r->predicted, 8);
  auto model = RankDff(EveryCandidate(4096, 4), PredictorTimer(**FindGpu("h100")));
  ASSERT_TRUE(model.ok());
  std::map<int64_t, double> predicted_speedup;
  for (const DffRow& row : model->rows) predicted_speedup[row.d_ff] = row.speedup_vs_baseline;
  for (const DffRow& row : r->rows) {
    if (row.source == Source::kMeasured) {
      EXPECT_DOUBLE_EQ(row.speedup_vs_baseline, 1.0);
    } else {
      EXPECT_DOUBLE_EQ(row.speedup_vs_baseline, predicted_speedup.at(row.d_ff)) << row.d_ff;
    }
  }
}

}  // namespace
}  // namespace crest::sweep
