#include "crest/wire/sweep_summary.h"

#include <gtest/gtest.h>

#include "crest/wire/values.h"

namespace crest::wire {
namespace {

// A measuring sweep's report with every part set: a race with standings,
// an adaptive plan's note, a revalidation, the device and software.
sweep::SweepReport FullReport() {
  sweep::SweepReport r;
  sweep::SweepOutcome& o = r.outcome;
  o.job.id = 7;
  o.job.uid = "u-7";
  o.job.state = store::JobState::kDone;
  o.job.total = 12;
  o.job.done = 12;
  o.job.created_us = 100;
  o.job.started_us = 200;
  o.job.finished_us = 300;
  o.progress = {12, 12, 9, 1, 4.5, 4.0, 3.5, {0.1, 0.2, 0.3, 0.4, 0.05}, 0.25, 0.125, 0.5};
  o.already_present = 2;
  o.resumed = true;
  o.first_error = "gemm 3: no algorithm";
  sweep::StudyRaceReport& race = o.races.emplace_back();
  race.study = "dff hidden=4096";
  race.algo = tuner::AlgoChoice::kDefault;
  race.race_id = 3;
  race.raced_job = 7;
  race.measured_on = "measured on NVIDIA H100";
  race.d_ff = {10944, 11008};
  race.result.rounds = 12;
  race.result.retaken = 1;
  race.result.warmup_s = 1.5;
  race.result.settled = true;
  race.result.seconds = 4.25;
  race.result.stop_reason = "resolved";
  race.result.standings = {
      {1, 11008, tuner::RaceVerdict::kLeader, 1, 12, 1953.5, 1, 1, 1},
      {0, 10944, tuner::RaceVerdict::kSlower, 2, 12, 2001.0, 1.02, 1.01, 1.03}};
  o.races.push_back(
      {"dff hidden=8192", tuner::AlgoChoice::kBest, 0, "one candidate", 0, "", {}, {}});
  o.plan_notes = {"plan adaptive: timed 4 of 12"};
  o.revalidation = sweep::SweepOutcome::Revalidation{5, 1, {"retimed 5", "slower: 1"}};
  r.backend = "cublaslt";
  r.measures = true;
  r.mode.clocks = tuner::ClockPolicy::kBurst;
  r.measure = {{"warmup_ms", 100}};
  r.notes = {"skipped tp=3: 32 heads"};
  r.device = tuner::DeviceInfo{};
  r.device->name = "NVIDIA H100 80GB HBM3";
  r.device->uuid = "GPU-1";
  r.software = tuner::SoftwareInfo{"580.1", 13000, 130100};
  return r;
}

v1::JobEvent FinalEvent(const sweep::SweepReport& r) {
  v1::JobEvent e;
  Fill(r.outcome.job, e.mutable_job());
  e.set_new_results(r.outcome.progress.new_results);
  e.set_failed(r.outcome.progress.failed);
  e.set_elapsed_s(r.outcome.progress.elapsed_s);
  e.set_kernel_s(r.outcome.progress.kernel_s);
  e.set_final(true);
  Fill(r, e.mutable_summary());
  return e;
}

// What `crest sweep --server` prints is rebuilt from the wire: every part of
// the report a local sweep prints comes back as it was sent.
TEST(WireSweepSummary, EveryPartOfASweepReportSurvivesTheWire) {
  const sweep::SweepReport sent = FullReport();
  auto back = SweepReportOf(FinalEvent(sent));
  ASSERT_TRUE(back.ok()) << back.status();
  const sweep::SweepOutcome& o = back->outcome;
  EXPECT_EQ(o.job.id, 7);
  EXPECT_EQ(o.job.state, store::JobState::kDone);
  EXPECT_EQ(o.job.started_us, 200);
  EXPECT_EQ(o.progress.done, 12);
  EXPECT_EQ(o.progress.new_results, 9);
  EXPECT_EQ(o.progress.failed, 1);
  EXPECT_DOUBLE_EQ(o.progress.busy_s, 4.0);
  EXPECT_DOUBLE_EQ(o.progress.kernel_s, 3.5);
  EXPECT_DOUBLE_EQ(o.progress.host.verify_s, 0.4);
  EXPECT_DOUBLE_EQ(o.progress.host.readings_s, 0.05);
  EXPECT_DOUBLE_EQ(o.progress.write_s, 0.25);
  EXPECT_DOUBLE_EQ(o.progress.reload_s, 0.125);
  EXPECT_DOUBLE_EQ(o.progress.keep_load_s, 0.5);
  EXPECT_EQ(o.progress.GemmsPerMinute(), sent.outcome.progress.GemmsPerMinute());
  EXPECT_EQ(o.already_present, 2);
  EXPECT_TRUE(o.resumed);
  EXPECT_EQ(o.first_error, "gemm 3: no algorithm");
  ASSERT_EQ(o.races.size(), 2u);
  EXPECT_EQ(sweep::DescribeRace(o.races[0]), sweep::DescribeRace(sent.outcome.races[0]));
  EXPECT_EQ(sweep::DescribeRace(o.races[1]), sweep::DescribeRace(sent.outcome.races[1]));
  EXPECT_EQ(o.races[0].result.standings[0].value, 11008) << "a standing names its d_ff";
  EXPECT_EQ(o.races[0].result.standings[1].ratio_high, 1.03);
  EXPECT_EQ(o.plan_notes, sent.outcome.plan_notes);
  ASSERT_TRUE(o.revalidation);
  EXPECT_EQ(o.revalidation->retimed, 5);
  EXPECT_EQ(o.revalidation->lines, sent.outcome.revalidation->lines);
  EXPECT_EQ(back->backend, "cublaslt");
  EXPECT_TRUE(back->measures);
  EXPECT_EQ(back->mode.clocks, tuner::ClockPolicy::kBurst);
  EXPECT_EQ(back->measure, sent.measure);
  EXPECT_EQ(back->notes, sent.notes);
  ASSERT_TRUE(back->device && back->software);
  EXPECT_EQ(back->device->uuid, "GPU-1");
  EXPECT_EQ(back->software->cublaslt, 130100);
}

TEST(WireSweepSummary, AModelSweepCarriesNoDeviceAndNoRevalidation) {
  sweep::SweepReport r;
  r.outcome.job.state = store::JobState::kDone;
  r.backend = "model";
  auto back = SweepReportOf(FinalEvent(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->device);
  EXPECT_FALSE(back->software);
  EXPECT_FALSE(back->outcome.revalidation);
  EXPECT_TRUE(back->measure.is_null());
}

TEST(WireSweepSummary, WhatThisCrestCannotReadIsRefusedByField) {
  v1::JobEvent none;
  none.mutable_job()->set_state(v1::JOB_STATE_DONE);
  EXPECT_EQ(SweepReportOf(none).status().message().substr(0, 8), "summary:");

  v1::JobEvent verdict = FinalEvent(FullReport());
  verdict.mutable_summary()->mutable_races(0)->mutable_standings(0)->set_verdict("faster");
  EXPECT_EQ(SweepReportOf(verdict).status().message().substr(0, 34),
            "summary.races.standings.verdict: u");

  v1::JobEvent candidate = FinalEvent(FullReport());
  candidate.mutable_summary()->mutable_races(0)->mutable_standings(1)->set_candidate(2);
  EXPECT_EQ(SweepReportOf(candidate).status().message().substr(0, 36),
            "summary.races.standings.candidate: 2");

  v1::JobEvent state = FinalEvent(FullReport());
  state.mutable_job()->set_state(static_cast<v1::JobState>(42));
  EXPECT_EQ(SweepReportOf(state).status().message().substr(0, 10), "job.state:");

  v1::JobEvent measure = FinalEvent(FullReport());
  measure.mutable_summary()->set_measure_json("{");
  EXPECT_EQ(SweepReportOf(measure).status().message().substr(0, 21), "summary.measure_json:");
}

}  // namespace
}  // namespace crest::wire
