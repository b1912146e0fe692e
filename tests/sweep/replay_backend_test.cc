// The replay backend times a recorded table (the shipped PyTorch H100 MLP
// table) through the measuring pipeline and the study race into a store,
// and every answer built on it says "replayed", never "measured".
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "crest/answers/answers.h"
#include "crest/store/timing_csv.h"
#include "crest/sweep/backend_factory.h"
#include "crest/sweep/runner.h"
#include "fake_backend.h"
#include "gtest/gtest.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::sweep {
namespace {

using crest::testing::EveryCandidate;
using crest::testing::OpenSweepDb;
using crest::testing::Spec;
using crest::testing::TempDir;

const std::string kTable =
    std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/torch-mlp-h4096.csv";
const std::string kTrace =
    std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/nvidia-smi-clock-trace.csv";
// d_ff 10858 … 10986 (the table holds 10794 … 11050): 16 multiples of 8 within
// a few percent of each other, so the study race has candidates to race.
constexpr int64_t kWindow = 64;
constexpr char kWindowSpec[] = R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 64}]})";

BackendChoice Replay(ReplayChoice replay = {}) {
  BackendChoice choice;
  choice.name = "replay";
  choice.gpu = "h100";
  if (replay.file.empty()) replay.file = kTable;
  choice.replay = replay;
  return choice;
}

absl::StatusOr<tuner::DffRanking> Answer(store::Store& db) {
  return answers::StoreAnswers(db, "r.db", {})
      ->Dff(EveryCandidate(4096, kWindow), **tuner::FindGpu("h100"));
}

// The table's time of each GEMM of the window's d_ff, both GEMMs together.
std::map<int64_t, double> TableTimes() {
  store::TimingCsvOptions csv;
  csv.device = "h100";
  csv.tool = "test";
  auto batch = store::ReadTimingCsv(kTable, csv);
  EXPECT_TRUE(batch.ok()) << batch.status();
  std::map<int64_t, double> out;
  for (const store::ImportedTiming& t : batch->rows) {
    const int64_t d_ff = t.key.n == 4096 ? t.key.k : t.key.n / 2;  // down: k = d_ff
    if (std::abs(d_ff - 10922) <= kWindow) out[d_ff] += t.time_us;
  }
  return out;
}

TEST(ReplayBackend, SweepsTheTableThroughThePipelineAndTheAnswerSaysReplayed) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = MakeBackend(Replay());
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->Name(), "replay");
  EXPECT_FALSE((*backend)->Device().replay.empty());
  auto out = RunSweep(Spec(kWindowSpec), **backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->job.state, store::JobState::kDone) << out->first_error;
  EXPECT_EQ(out->progress.done, 2 * (2 * kWindow + 1));
  ASSERT_EQ(out->races.size(), 1u) << "the study race runs on the replayed times too";
  EXPECT_GT(out->races.front().race_id, 0) << out->races.front().why_not;

  auto answer = Answer(*db);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->replayed, 2 * kWindow + 1);
  EXPECT_EQ(answer->measured, 0) << "replayed rows are never counted as measured";
  EXPECT_EQ(answer->headline, tuner::Source::kReplayed);
  const std::map<int64_t, double> table = TableTimes();
  ASSERT_EQ(table.size(), static_cast<size_t>(2 * kWindow + 1));
  for (const tuner::DffRow& row : answer->rows) {
    EXPECT_EQ(row.source, tuner::Source::kReplayed) << row.d_ff;
    EXPECT_NE(row.provenance.find("REPLAYED (not measured): torch-mlp-h4096.csv"),
              std::string::npos)
        << row.provenance;
    EXPECT_NEAR(row.time_us / table.at(row.d_ff), 1, 0.03)
        << "d_ff " << row.d_ff << ": steady replay at 2% noise stays near the table's time";
  }
  // The race ordered the leading rows, and the table's best is among the
  // answer's tie group 1 (the replay's noise may reorder what the table
  // itself cannot tell apart).
  ASSERT_TRUE(answer->race.has_value()) << answer->race_note;
  const auto best = std::min_element(table.begin(), table.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  const auto found = std::find_if(answer->rows.begin(), answer->rows.end(),
                                  [&](const tuner::DffRow& r) { return r.d_ff == best->first; });
  ASSERT_NE(found, answer->rows.end());
  EXPECT_EQ(found->tie_group, 1) << "the table's best, " << best->first;
  EXPECT_LT(table.at(answer->rows.front().d_ff) / best->second, 1.01)
      << "the answer's best is within 1% of the table's best";
}

TEST(ReplayBackend, AnAdaptivePlanTimesAQuarterOfTheWindowAndFindsItsBest) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = MakeBackend(Replay());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto spec =
      Spec(R"({"gpu": "h100", "plan": "adaptive", "dff": [{"hidden": 4096, "window": 128}]})");
  std::vector<std::string> stages;
  SweepOptions options;
  options.on_stage = [&](std::string_view line) { stages.emplace_back(line); };
  auto out = RunSweep(spec, **backend, *db, options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->job.state, store::JobState::kDone) << out->first_error;
  EXPECT_LE(out->progress.done, 2 * 257 / 4) << "at most a quarter of the window's GEMMs";
  EXPECT_EQ(out->job.total, out->progress.done) << "the job's total is what the plan timed";
  ASSERT_EQ(out->plan_notes.size(), 1u);
  EXPECT_NE(out->plan_notes[0].find("of 257 candidates"), std::string::npos) << out->plan_notes[0];
  EXPECT_NE(out->plan_notes[0].find("replayed leader d_ff"), std::string::npos)
      << "a replayed time is never called measured: " << out->plan_notes[0];
  EXPECT_NE(stages.front().find("plan adaptive: round 1"), std::string::npos) << stages.front();

  tuner::DffQuery everything = EveryCandidate(4096, 128);
  auto answer = answers::StoreAnswers(*db, "r.db", {})->Dff(everything, **tuner::FindGpu("h100"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->replayed + answer->predicted, 257) << "the untimed are predicted, and say so";
  EXPECT_EQ(answer->replayed, out->progress.done / 2);
  // The table's best of the whole window (the table holds 10794 … 11050).
  store::TimingCsvOptions csv;
  csv.device = "h100";
  csv.tool = "test";
  auto batch = store::ReadTimingCsv(kTable, csv);
  ASSERT_TRUE(batch.ok());
  std::map<int64_t, double> table;
  for (const store::ImportedTiming& t : batch->rows)
    table[t.key.n == 4096 ? t.key.k : t.key.n / 2] += t.time_us;
  double best = 1e300;
  for (const auto& [d_ff, us] : table) best = std::min(best, us);
  const tuner::DffRow* lead = nullptr;
  for (const tuner::DffRow& r : answer->rows) {
    if (r.source == tuner::Source::kReplayed && (lead == nullptr || r.time_us < lead->time_us))
      lead = &r;
  }
  ASSERT_NE(lead, nullptr);
  EXPECT_LT(table.at(lead->d_ff) / best, 1.01)
      << "the timed leader is within 1% of the table's best";

  // Run again: the plan takes the stored times and times nothing new.
  auto again = RunSweep(spec, **backend, *db, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->progress.new_results, 0);
}

TEST(ReplayBackend, AnAdaptivePlanNeedsAMeasuringBackend) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  BackendChoice model;
  model.name = "model";
  model.gpu = "h100";
  auto backend = MakeBackend(model);
  ASSERT_TRUE(backend.ok());
  auto out = RunSweep(Spec(R"({"gpu": "h100", "plan": "adaptive", "dff": [{"hidden": 4096}]})"),
                      **backend, *db, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message().substr(0, 6), "plan: ") << out.status().message();
}

TEST(ReplayBackend, TheSameSeedReplaysTheSameTimesAndAnotherDoesNot) {
  const auto median_of = [](uint64_t seed) {
    TempDir dir;
    auto db = OpenSweepDb(dir);
    ReplayChoice replay;
    replay.seed = seed;
    auto backend = MakeBackend(Replay(replay));
    EXPECT_TRUE(backend.ok()) << backend.status();
    auto out = RunSweep(Spec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 0}]})"),
                        **backend, *db, {});
    EXPECT_TRUE(out.ok()) << out.status();
    auto answer = answers::StoreAnswers(*db, "r.db", {})
                      ->Dff(EveryCandidate(4096, 0), **tuner::FindGpu("h100"));
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer->rows.front().time_us;
  };
  EXPECT_EQ(median_of(7), median_of(7));
  EXPECT_NE(median_of(7), median_of(8));
}

TEST(ReplayBackend, WithTheClockTraceItRunsAtBoostFirstAndAtTheTableUnderLoad) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  ReplayChoice replay;
  replay.trace = kTrace;
  replay.noise = 0;
  auto backend = MakeBackend(Replay(replay));
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_NE((*backend)->Device().replay.find("drift nvidia-smi-clock-trace.csv"), std::string::npos)
      << (*backend)->Device().replay;
  auto out = RunSweep(Spec(kWindowSpec), **backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  auto answer = Answer(*db);
  ASSERT_TRUE(answer.ok()) << answer.status();
  const std::map<int64_t, double> table = TableTimes();
  for (const tuner::DffRow& row : answer->rows) {
    // Sustained: the settled clock of the trace (1410-1515 MHz) varies the
    // times by a few percent around the table's.
    EXPECT_NEAR(row.time_us / table.at(row.d_ff), 1, 0.06) << row.d_ff;
  }
}

TEST(ReplayBackend, AGemmTheTableLacksFailsByNameAndTheRestAreKept) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = MakeBackend(Replay());
  ASSERT_TRUE(backend.ok()) << backend.status();
  // down GEMMs of d_ff 10793 and 10794: the table starts at 10794.
  auto out = RunSweep(Spec(R"({"gpu": "h100", "gemms": [{"name": "down", "m": 8192, "n": 4096,
                               "k": [10793, 10794], "layout": "NT"}]})"),
                      **backend, *db, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->job.state, store::JobState::kFailed);
  EXPECT_NE(out->first_error.find("torch-mlp-h4096.csv"), std::string::npos) << out->first_error;
  EXPECT_NE(out->first_error.find("has no row for"), std::string::npos) << out->first_error;
  EXPECT_EQ(out->progress.done, 1) << "10794's GEMM is kept";
}

TEST(ReplayBackend, BadOptionsAreRefusedByName) {
  ReplayChoice noisy;
  noisy.noise = 0.9;
  auto a = MakeBackend(Replay(noisy));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("--replay-noise"), std::string::npos) << a.status();

  ReplayChoice missing;
  missing.file = "/nonexistent/table.csv";
  EXPECT_FALSE(MakeBackend(Replay(missing)).ok());

  BackendChoice no_file;
  no_file.name = "replay";
  auto b = MakeBackend(no_file);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("--replay"), std::string::npos) << b.status();

  TempDir dir;
  const std::string with_device = dir.path() + "/h100.csv";
  std::ofstream(with_device)
      << "device,m,n,k,dtype,layout,median_us\nh100,8192,4096,10794,bf16,NT,3161\n";
  ReplayChoice h100_table;
  h100_table.file = with_device;
  BackendChoice other_gpu = Replay(h100_table);
  other_gpu.gpu = "a100";
  auto c = MakeBackend(other_gpu);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("recorded on"), std::string::npos) << c.status();

  BackendChoice no_gpu = Replay();
  no_gpu.gpu.clear();
  auto d = MakeBackend(no_gpu);
  ASSERT_FALSE(d.ok()) << "the table has no device column";
  EXPECT_NE(d.status().message().find("--gpu"), std::string::npos) << d.status();

  ReplayChoice bad_trace;
  bad_trace.trace = kTable;  // not an nvidia-smi trace
  auto e = MakeBackend(Replay(bad_trace));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("torch-mlp-h4096.csv:"), std::string::npos) << e.status();
}

TEST(ReplayBackend, ReplayedAndMeasuredRunsOfOneGpuModelNeverShareADatabase) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  auto backend = MakeBackend(Replay());
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_TRUE(RunSweep(Spec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 0}]})"),
                       **backend, *db, {})
                  .ok());
  crest::testing::FakeMeasuringBackend measuring;  // an H100
  auto out = RunSweep(Spec(R"({"dff": [{"hidden": 4096, "window": 0}]})"), measuring, *db, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("holds replayed runs of H100-SXM"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace crest::sweep
