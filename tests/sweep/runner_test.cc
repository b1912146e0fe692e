#include "crest/sweep/runner.h"

#include <atomic>
#include <map>

#include "crest/answers/answers.h"
#include "crest/store/admin.h"
#include "crest/tuner/predictor.h"
#include "fake_backend.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::sweep {
namespace {

using crest::testing::EveryCandidate;
using crest::testing::FakeMeasuringBackend;
using crest::testing::OpenSweepDb;
using crest::testing::Spec;
using crest::testing::TempDir;

TEST(RunSweep, ModelBackendWritesEveryPredictionOnceAndResumesToNothing) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = tuner::MakeModelBackend(**tuner::FindGpu("h100"));
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
  EXPECT_EQ(store::Stats(*db)->predictions, 34);
}

TEST(RunSweep, ModelPredictionsCommitInBatchesEachReportedOnlyOnceCommitted) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = tuner::MakeModelBackend(**tuner::FindGpu("h100"));
  const SweepSpec spec = Spec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 64}]})");
  SweepOptions options;
  options.prediction_batch = 100;
  int64_t reported = 0;
  int progress_reports = 0;
  options.on_result = [&](const tuner::GemmShape&, const tuner::GemmOutcome&) {
    ++reported;
    EXPECT_GE(store::Stats(*db)->predictions, reported) << "reported before its commit";
  };
  options.on_progress = [&](const SweepProgress& p) {
    ++progress_reports;
    EXPECT_EQ(db->GetJob(1)->done, p.done) << "the job's progress commits with its batch";
    EXPECT_EQ(store::Stats(*db)->predictions, p.done);
  };
  auto run = RunSweep(spec, *backend, *db, options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->job.state, store::JobState::kDone);
  EXPECT_EQ(reported, 258);
  EXPECT_EQ(run->job.done, 258);
  EXPECT_LT(progress_reports, 258) << "one report a batch, not a GEMM";
}

TEST(RunSweep, AModelSweepInterruptedAfterABatchResumesExactly) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = tuner::MakeModelBackend(**tuner::FindGpu("h100"));
  const SweepSpec spec = Spec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 64}]})");
  std::atomic<bool> interrupt{false};
  SweepOptions options;
  options.prediction_batch = 100;
  options.interrupt = &interrupt;
  options.on_result = [&](const tuner::GemmShape&, const tuner::GemmOutcome&) { interrupt = true; };
  auto first = RunSweep(spec, *backend, *db, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->interrupted);
  EXPECT_EQ(first->job.state, store::JobState::kQueued);
  const int64_t committed = first->job.done;
  EXPECT_GT(committed, 0);
  EXPECT_LT(committed, 258);
  EXPECT_EQ(store::Stats(*db)->predictions, committed) << "the job counts exactly what committed";

  auto second = RunSweep(spec, *backend, *db, {});
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->resumed);
  EXPECT_EQ(second->already_present, committed);
  EXPECT_EQ(second->progress.new_results, 258 - committed);
  EXPECT_EQ(second->job.done, 258);
  EXPECT_EQ(store::Stats(*db)->predictions, 258) << "nothing written twice";
}

TEST(RunSweep, FailedGemmsLeaveTheJobFailedAndTheRerunResumesIt) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
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
  EXPECT_EQ(store::Stats(*db)->measurements, 18 * 2);
}

TEST(RunSweep, ForceMeasuresAgainAndCancelStopsBetweenGemms) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  FakeMeasuringBackend backend;
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})");
  ASSERT_TRUE(RunSweep(spec, backend, *db, {}).ok());
  SweepOptions force;
  force.force = true;
  ASSERT_TRUE(RunSweep(spec, backend, *db, force).ok());
  EXPECT_EQ(store::Stats(*db)->measurements, 2 * 10 * 2);

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

// crestd's wall-time budget: the run stops between GEMMs and the job goes
// straight from running to failed with the reason; no reader of the job
// ever sees it "cancelled" first. What it wrote is kept; a rerun resumes.
TEST(RunSweep, AFailReasonStopsBetweenGemmsAndLeavesTheJobFailedSayingWhy) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  FakeMeasuringBackend backend;
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})");
  int results = 0;
  std::vector<store::JobState> seen;
  SweepOptions budget;
  budget.on_progress = [&](const SweepProgress& p) { results = static_cast<int>(p.new_results); };
  budget.fail_reason = [&]() -> std::string {
    if (auto jobs = db->ListJobs({}); jobs.ok() && !jobs->empty()) {
      seen.push_back(jobs->front().state);
    }
    return results >= 4 ? "ran past its budget" : "";
  };
  auto stopped = RunSweep(spec, backend, *db, budget);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->job.state, store::JobState::kFailed);
  EXPECT_EQ(stopped->job.error,
            "ran past its budget after 4 of 10 GEMMs; their results are kept, and running the "
            "job again runs the rest");
  EXPECT_EQ(stopped->job.done, 4);
  for (store::JobState s : seen) EXPECT_EQ(s, store::JobState::kRunning);
  EXPECT_TRUE(stopped->races.empty()) << "a stopped job raced its studies";
  auto rest = RunSweep(spec, backend, *db, {});
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_TRUE(rest->resumed);
  EXPECT_EQ(rest->job.state, store::JobState::kDone);
  EXPECT_EQ(rest->progress.new_results, 6) << "only the rest ran";
}

TEST(RunSweep, AWarmSweepAfterAColdOneMeasuresEverythingAndTheModesNeverMix) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  const SweepSpec spec = Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})");
  FakeMeasuringBackend cold;
  ASSERT_TRUE(RunSweep(spec, cold, *db, {}).ok());
  FakeMeasuringBackend warm;
  warm.mode.cache = tuner::CacheMode::kWarm;
  warm.slowdown = 0.5;  // warm L2: faster, and not comparable
  auto w = RunSweep(spec, warm, *db, {});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->already_present, 0) << "the cold results were taken for warm ones";
  EXPECT_EQ(w->progress.new_results, 10);
  EXPECT_EQ(warm.reserved.size(), 10u);
  FakeMeasuringBackend burst;
  burst.mode.clocks = tuner::ClockPolicy::kBurst;
  burst.slowdown = 0.8;
  ASSERT_TRUE(RunSweep(spec, burst, *db, {}).ok());
  EXPECT_EQ(burst.runs, 10);

  tuner::DffQuery q = EveryCandidate(4096, 2);
  answers::AnswerOptions options;
  auto cold_rank = answers::StoreAnswers(*db, "s.db", options)->Dff(q, **tuner::FindGpu("h100"));
  options.mode.cache = tuner::CacheMode::kWarm;
  auto warm_rank = answers::StoreAnswers(*db, "s.db", options)->Dff(q, **tuner::FindGpu("h100"));
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
  auto db = OpenSweepDb(dir);
  FakeMeasuringBackend backend;
  ASSERT_TRUE(RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 1}]})"), backend, *db, {}).ok());
  EXPECT_EQ(backend.reserved.size(), 6u);
  ASSERT_TRUE(RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 2}]})"), backend, *db, {}).ok());
  EXPECT_EQ(backend.reserved.size(), 4u) << "GEMMs already measured were planned for";
}

TEST(SweepProgress, BreaksTheHostTimePerGemmDownByStep) {
  SweepProgress p;
  EXPECT_EQ(p.HostPerGemm().between_s, 0) << "no GEMM run yet";
  p.new_results = 4;
  p.elapsed_s = 2.0;
  p.busy_s = 1.6;
  p.kernel_s = 1.0;
  p.host = {0.04, 0.08, 0.12, 0.16};  // operands, plan, graphs, verification (totals)
  p.write_s = 0.2;
  const auto h = p.HostPerGemm();
  EXPECT_DOUBLE_EQ(h.host.operands_s, 0.01);
  EXPECT_DOUBLE_EQ(h.host.verify_s, 0.04);
  EXPECT_NEAR(h.other_engine_s, (1.6 - 1.0 - 0.4) / 4, 1e-12);
  EXPECT_DOUBLE_EQ(h.write_s, 0.05);
  EXPECT_NEAR(h.between_s, (2.0 - 1.6 - 0.2) / 4, 1e-12);
  // The parts add up to the host overhead per GEMM.
  EXPECT_NEAR(h.host.Total() + h.other_engine_s + h.write_s + h.between_s, p.HostOverheadPerGemmS(),
              1e-12);
}

TEST(RunSweep, SumsTheEnginesHostStepsAndTimesTheDatabaseWrites) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  FakeMeasuringBackend backend;
  backend.host = {0.001, 0.002, 0.003, 0.004};
  auto run = RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 1}]})"), backend, *db, {});
  ASSERT_TRUE(run.ok()) << run.status();
  const SweepProgress& p = run->progress;
  ASSERT_EQ(p.new_results, 6);
  EXPECT_NEAR(p.host.operands_s, 6 * 0.001, 1e-12);
  EXPECT_NEAR(p.host.verify_s, 6 * 0.004, 1e-12);
  EXPECT_GT(p.write_s, 0) << "six results were written";
  EXPECT_LE(p.write_s, p.elapsed_s);
  EXPECT_NEAR(p.HostPerGemm().host.plan_s, 0.002, 1e-12);
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

}  // namespace
}  // namespace crest::sweep
