// Answers from a result store: each candidate's measured GEMMs from one run
// (or a pool of runs that the answer names), the model filling the rest.
#include <map>
#include <string>

#include "crest/answers/answers.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"
#include "crest/tuner/vocab.h"
#include "fake_backend.h"
#include "fake_env.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"
#include "read_lock_vfs.h"
#include "stored_times.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::answers {
namespace {

using crest::testing::EveryCandidate;
using crest::testing::FakeMeasuringBackend;
using crest::testing::ReadLockCountingVfsName;
using crest::testing::ReadLocksTaken;
using crest::testing::Spec;
using crest::testing::TempDir;

// A store whose clock the test moves: each job's creation time orders runs.
class StoreAnswersTest : public ::testing::Test {
 protected:
  StoreAnswersTest() {
    env_.SetNow(now_s_);
    store::StoreOptions options;
    options.host = "node0";
    options.synchronous_full = false;
    options.env = &env_;
    auto db = store::Store::Open(dir_.File("s.db"), options);
    EXPECT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Runs `spec` as a new job (forced: every GEMM measured again), a minute
  // after the previous one.
  void Sweep(const std::string& spec, double slowdown, const std::string& uuid = "GPU-fake-0",
             int64_t cublaslt = 130100) {
    now_s_ += 60;
    env_.SetNow(now_s_);
    FakeMeasuringBackend gpu;
    gpu.slowdown = slowdown;
    gpu.uuid = uuid;
    gpu.cublaslt = cublaslt;
    sweep::SweepOptions options;
    options.force = true;
    auto done = sweep::RunSweep(Spec(spec), gpu, *db_, options);
    ASSERT_TRUE(done.ok()) << done.status();
  }

  absl::StatusOr<tuner::DffRanking> Dff(const tuner::DffQuery& q,
                                        RunChoice runs = RunChoice::kLatest) {
    AnswerOptions options;
    options.runs = runs;
    return StoreAnswers(*db_, "s.db", options)->Dff(q, **tuner::FindGpu("h100"));
  }

  TempDir dir_;
  double now_s_ = 1.8e9;
  crest::testing::FakeEnv env_;
  std::unique_ptr<store::Store> db_;
};

TEST_F(StoreAnswersTest, ACandidateIsTheMostRecentRunsNotTheFastestOfEachGemmAcrossRuns) {
  Sweep(R"({"name":"fast","dff":[{"hidden":4096,"window":0}]})", 1.0);
  Sweep(R"({"name":"slow","dff":[{"hidden":4096,"window":0}]})", 1.5);
  auto r = Dff(EveryCandidate(4096, 0));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  const tuner::DffRow& row = r->rows[0];
  EXPECT_EQ(row.source, tuner::Source::kMeasured);
  // 10922: gate_up K=4096 → 200 + 4096 % 7 = 201; down K=10922 → 200 + 2 = 202.
  EXPECT_NEAR(row.time_us, 1.5 * (201 + 202), 1e-6) << "the newer run, whole";
  ASSERT_EQ(row.runs.size(), 1u);
  EXPECT_EQ(row.runs[0].name, "slow");
  EXPECT_EQ(row.runs[0].job_id, 2);
  EXPECT_GT(row.runs[0].started_us, 0);
  EXPECT_FALSE(row.pooled);
  ASSERT_EQ(r->runs.size(), 1u) << "the answer names the run it used";
}

// Each answer's reads (runs, rows, races, predictions) see one state of the
// database: a sweep committing meanwhile shows in all of them or in none.
TEST_F(StoreAnswersTest, EachAnswerReadsOneSnapshotOfTheDatabase) {
  Sweep(R"({"name":"a","dff":[{"hidden":4096,"window":64}]})", 1.0);
  Sweep(R"({"name":"b","dff":[{"hidden":4096,"window":64}]})", 1.2);
  store::StoreOptions options;
  options.vfs = ReadLockCountingVfsName();
  auto counted = store::Store::Open(dir_.File("s.db"), options);
  ASSERT_TRUE(counted.ok()) << counted.status();
  const tuner::GpuSpec& gpu = **tuner::FindGpu("h100");
  auto answers = StoreAnswers(**counted, "s.db", {});
  const int64_t before = ReadLocksTaken();
  auto dff = answers->Dff(EveryCandidate(4096, 64), gpu);
  ASSERT_TRUE(dff.ok()) << dff.status();
  ASSERT_EQ(dff->rows.front().source, tuner::Source::kMeasured);
  EXPECT_EQ(ReadLocksTaken() - before, 1) << "the d_ff answer read more than one snapshot";
  const int64_t lookup_before = ReadLocksTaken();
  auto lookup = answers->Lookup(testing::Gemm(8192, 21844, 4096), gpu);
  ASSERT_TRUE(lookup.ok()) << lookup.status();
  EXPECT_TRUE(lookup->measured.has_value());
  EXPECT_EQ(ReadLocksTaken() - lookup_before, 1) << "the lookup read more than one snapshot";
  // What is counted is snapshots: two reads outside an answer are two.
  const int64_t apart_before = ReadLocksTaken();
  ASSERT_TRUE((*counted)->GetMeasurement(lookup->measured->id).ok());
  ASSERT_TRUE((*counted)->GetMeasurement(lookup->measured->id).ok());
  EXPECT_EQ(ReadLocksTaken() - apart_before, 2);
}

TEST_F(StoreAnswersTest, GemmsMeasuredOnlyByDifferentRunsAreNotStitchedUnlessPooled) {
  // Run 1 measures 10922's gate+up, run 2 its down projection, faster: the
  // fastest of each would make an MLP time no run measured.
  const std::string gate_up =
      R"({"name":"gate_up","gemms":[{"name":"g","m":8192,"n":21844,"k":4096,"dtype":"bf16"}]})";
  const std::string down =
      R"({"name":"down","gemms":[{"name":"d","m":8192,"n":4096,"k":10922,"dtype":"bf16"}]})";
  Sweep(gate_up, 1.0);
  Sweep(down, 0.5);
  auto latest = Dff(EveryCandidate(4096, 0));
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->rows[0].source, tuner::Source::kPredicted) << "no one run measured it whole";
  EXPECT_EQ(latest->measured_across_runs, 1);
  EXPECT_TRUE(latest->runs.empty());
  auto pooled = Dff(EveryCandidate(4096, 0), RunChoice::kAll);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  const tuner::DffRow& row = pooled->rows[0];
  EXPECT_EQ(row.source, tuner::Source::kMeasured);
  EXPECT_TRUE(row.pooled) << "two runs' GEMMs: said, never hidden";
  EXPECT_EQ(row.runs.size(), 2u);
  EXPECT_EQ(pooled->measured_across_runs, 0);
}

TEST_F(StoreAnswersTest, PoolingTakesTheMedianOfTheRunsNeverTheBest) {
  for (double slowdown : {1.0, 3.0, 2.0})
    Sweep(R"({"dff":[{"hidden":4096,"window":0}]})", slowdown);
  auto three = Dff(EveryCandidate(4096, 0), RunChoice::kAll);
  ASSERT_TRUE(three.ok());
  const tuner::DffRow& row = three->rows[0];
  EXPECT_NEAR(row.time_us, 2.0 * 403, 1e-6) << "the median of 1x, 3x, 2x";
  EXPECT_NEAR(row.time_low_us, 0.99 * 403, 1e-6) << "covering every run's interval";
  EXPECT_NEAR(row.time_high_us, 1.01 * 3 * 403, 1e-6);
  EXPECT_EQ(row.runs.size(), 3u);
  Sweep(R"({"dff":[{"hidden":4096,"window":0}]})", 4.0);
  auto four = Dff(EveryCandidate(4096, 0), RunChoice::kAll);
  ASSERT_TRUE(four.ok());
  EXPECT_NEAR(four->rows[0].time_us, 2.5 * 403, 1e-6) << "an even count: the middle two's mean";
  auto latest = Dff(EveryCandidate(4096, 0));
  ASSERT_TRUE(latest.ok());
  EXPECT_NEAR(latest->rows[0].time_us, 4.0 * 403, 1e-6) << "the latest run alone";
}

TEST_F(StoreAnswersTest, RunsOfOtherDevicesCountAsRunsAndTheNewestAnswers) {
  // Three devices of one model (as in a merged catalogue): 1x, 3x, 2x.
  const double slowdowns[] = {1, 3, 2};
  for (int i = 0; i < 3; ++i) {
    Sweep(R"({"dff":[{"hidden":4096,"window":1}]})", slowdowns[i], "GPU-fake-" + std::to_string(i));
  }
  auto r = Dff(EveryCandidate(4096, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const tuner::DffRow& row : r->rows) {
    EXPECT_EQ(row.source, tuner::Source::kMeasured);
    EXPECT_EQ(row.device.uuid, "GPU-fake-2") << "the newest run";
    ASSERT_EQ(row.runs.size(), 1u);
    EXPECT_EQ(row.runs[0].device_uuid, "GPU-fake-2");
  }
}

// --runs latest with windows swept by different runs: each candidate is
// the newest run's that measured it whole, though the newest run of all
// measured none of them and the next one only some.
TEST_F(StoreAnswersTest, EachCandidateIsTheNewestRunThatMeasuredItWhole) {
  Sweep(R"({"dff":[{"hidden":4096,"window":2}]})", 1.0);  // job 1: 10920-10924
  Sweep(R"({"dff":[{"hidden":4096,"window":0}]})", 2.0);  // job 2: 10922
  Sweep(R"({"dff":[{"hidden":5120,"window":0}]})", 3.0);  // job 3: another model
  auto r = Dff(EveryCandidate(4096, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->measured, 5);
  for (const tuner::DffRow& row : r->rows) {
    EXPECT_EQ(row.source, tuner::Source::kMeasured) << row.d_ff;
    ASSERT_EQ(row.runs.size(), 1u) << row.d_ff;
    EXPECT_EQ(row.runs[0].job_id, row.d_ff == 10922 ? 2 : 1) << row.d_ff;
  }
  EXPECT_EQ(r->runs.size(), 2u) << "the answer names the two runs it used";
}

TEST_F(StoreAnswersTest, TheNewestSoftwareThatMeasuredACandidateWholeAnswersNeverMixedWithOlder) {
  // cuBLASLt 13.2 measured ±0 first; 13.1 measured ±1 afterwards, later in
  // time: 10922 is 13.2's (newer software), 10921 and 10923 only 13.1's.
  Sweep(R"({"dff":[{"hidden":4096,"window":0}]})", 2.0, "GPU-fake-0", 130200);
  Sweep(R"({"dff":[{"hidden":4096,"window":1}]})", 1.0, "GPU-fake-0", 130100);
  auto r = Dff(EveryCandidate(4096, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->measured, 3);
  for (const tuner::DffRow& row : r->rows) {
    EXPECT_EQ(row.software.cublaslt, row.d_ff == 10922 ? 130200 : 130100) << row.d_ff;
    EXPECT_EQ(row.runs.size(), 1u);
  }
  AnswerOptions pinned;
  pinned.pin.cublaslt = 130100;
  auto old =
      StoreAnswers(*db_, "s.db", pinned)->Dff(EveryCandidate(4096, 1), **tuner::FindGpu("h100"));
  ASSERT_TRUE(old.ok());
  for (const tuner::DffRow& row : old->rows) EXPECT_EQ(row.software.cublaslt, 130100) << row.d_ff;
}

TEST_F(StoreAnswersTest, MeasuredRowsCarryTheirIntervalAndTiesFollowTheRule) {
  Sweep(R"({"dff":[{"hidden":4096,"window":24}]})", 1.0);
  auto r = Dff(EveryCandidate(4096, 24));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 49u);
  const tuner::DffRow& best = r->rows.front();
  EXPECT_EQ(best.d_ff, 10944);
  EXPECT_NEAR(best.time_low_us, 0.99 * best.time_us, 1e-6) << "the sum of the GEMMs' intervals";
  EXPECT_NEAR(best.time_high_us, 1.01 * best.time_us, 1e-6);
  EXPECT_EQ(r->tied_with_best, 1) << "nothing reaches the clearly faster 10944";
  // Every group's rows reach its leader's time; rows of later groups do not.
  std::map<int, double> leader;
  for (const tuner::DffRow& row : r->rows) {
    auto [it, first] = leader.try_emplace(row.tie_group, row.time_us);
    EXPECT_LE(row.time_low_us, it->second) << row.d_ff;
    for (const auto& [group, time] : leader) {
      if (group < row.tie_group) {
        EXPECT_GT(row.time_low_us, time) << row.d_ff;
      }
    }
  }
}

TEST_F(StoreAnswersTest, MixedKindsHaveOneHeadlineAndSpeedupsAgainstTheirOwnKind) {
  // Measurements for ±1 only; the rest of ±4 predicted by the model now.
  Sweep(R"({"dff":[{"hidden":4096,"window":1}]})", 1.0);
  auto r = Dff(EveryCandidate(4096, 4));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->measured, 3);
  EXPECT_EQ(r->predicted, 6);
  ASSERT_TRUE(r->baseline_found);
  EXPECT_EQ(r->baseline.source, tuner::Source::kMeasured);
  EXPECT_GT(r->predicted_baseline_us, 0);
  auto model = ModelAnswers()->Dff(EveryCandidate(4096, 4), **tuner::FindGpu("h100"));
  ASSERT_TRUE(model.ok());
  std::map<int64_t, double> predicted_speedup;
  for (const tuner::DffRow& row : model->rows)
    predicted_speedup[row.d_ff] = row.speedup_vs_baseline;
  for (const tuner::DffRow& row : r->rows) {
    EXPECT_EQ(row.speedup_basis, row.source) << row.d_ff;
    if (row.source == tuner::Source::kPredicted) {
      EXPECT_DOUBLE_EQ(row.speedup_vs_baseline, predicted_speedup.at(row.d_ff)) << row.d_ff;
    }
  }
  // One rank over the answer: the headline's kind first, never interleaved.
  EXPECT_EQ(r->headline, r->rows.front().source);
  size_t switches = 0;
  for (size_t i = 1; i < r->rows.size(); ++i)
    switches += r->rows[i].source != r->rows[i - 1].source;
  EXPECT_EQ(switches, 1u);
  EXPECT_EQ(r->rows.front().tie_group, 1);
}

TEST_F(StoreAnswersTest, AnEmptyDatabaseIsAnsweredByTheModelLabelledPredicted) {
  tuner::DffQuery q = EveryCandidate(4096, 128);
  auto r = Dff(q);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 257u);
  EXPECT_EQ(r->predicted, 257);
  auto model = ModelAnswers()->Dff(q, **tuner::FindGpu("h100"));
  ASSERT_TRUE(model.ok());
  for (size_t i = 0; i < r->rows.size(); ++i) {
    EXPECT_EQ(r->rows[i].source, tuner::Source::kPredicted);
    EXPECT_EQ(r->rows[i].provenance, tuner::ModelVersionFor(**tuner::FindGpu("h100"), q.dtype));
    EXPECT_EQ(r->rows[i].d_ff, model->rows[i].d_ff) << "the same model, the same ranking";
  }
}

TEST_F(StoreAnswersTest, ALookupIsTheLatestRunsOrThePoolsAndSaysWhich) {
  const std::string down =
      R"({"name":"down","gemms":[{"name":"d","m":8192,"n":4096,"k":10922,"dtype":"bf16"}]})";
  Sweep(down, 1.0);
  Sweep(down, 3.0);
  Sweep(down, 2.0);
  tuner::GemmShape g;
  g.m = 8192;
  g.n = 4096;
  g.k = 10922;
  AnswerOptions options;
  auto latest = StoreAnswers(*db_, "s.db", options)->Lookup(g, **tuner::FindGpu("h100"));
  ASSERT_TRUE(latest.ok() && latest->measured);
  EXPECT_NEAR(latest->measured->result.stats.median_us, 2.0 * 202, 1e-6);
  ASSERT_EQ(latest->runs.size(), 1u);
  EXPECT_EQ(latest->runs[0].job_id, 3);
  options.runs = RunChoice::kAll;
  auto pooled = StoreAnswers(*db_, "s.db", options)->Lookup(g, **tuner::FindGpu("h100"));
  ASSERT_TRUE(pooled.ok() && pooled->measured);
  EXPECT_TRUE(pooled->pooled);
  EXPECT_EQ(pooled->runs.size(), 3u);
  EXPECT_NEAR(pooled->pooled_us, 2.0 * 202, 1e-6);
  EXPECT_NEAR(pooled->pooled_low_us, 0.99 * 202, 1e-6);
  EXPECT_NEAR(pooled->pooled_high_us, 1.01 * 3 * 202, 1e-6);
  auto timing = TimingOf(*pooled, g);
  ASSERT_TRUE(timing.ok());
  EXPECT_TRUE(timing->pooled);
  EXPECT_NEAR(timing->time_us, 2.0 * 202, 1e-6);
}

TEST_F(StoreAnswersTest, VocabAndDesignTimeEachCandidatesGemmsFromOneRun) {
  // The logits GEMMs of vocab 32000 (fwd, dgrad, wgrad) in run 1, only its
  // forward again in run 2 (faster): the train time is run 1's alone.
  const std::string all =
      R"({"name":"all","gemms":[)"
      R"({"name":"f","m":8192,"n":32000,"k":4096,"dtype":"bf16","layout":"NT"},)"
      R"({"name":"d","m":8192,"n":4096,"k":32000,"dtype":"bf16","layout":"NN"},)"
      R"({"name":"w","m":32000,"n":4096,"k":8192,"dtype":"bf16","layout":"TN"}]})";
  const std::string fwd =
      R"({"name":"fwd","gemms":[{"name":"f","m":8192,"n":32000,"k":4096,"dtype":"bf16"}]})";
  Sweep(all, 1.0);
  Sweep(fwd, 0.5);
  tuner::VocabQuery q{32000, 4096, 1, 8192, tuner::DType::kBf16, true};
  auto r = StoreAnswers(*db_, "s.db", {})->Vocab(q, **tuner::FindGpu("h100"));
  ASSERT_TRUE(r.ok()) << r.status();
  const tuner::VocabRow* unpadded = nullptr;
  for (const tuner::VocabRow& row : r->rows) {
    if (row.padded == 32000) unpadded = &row;
  }
  ASSERT_NE(unpadded, nullptr);
  EXPECT_EQ(unpadded->train.source, tuner::Source::kMeasured);
  ASSERT_EQ(unpadded->train.runs.size(), 1u);
  EXPECT_EQ(unpadded->train.runs[0].name, "all");
  EXPECT_EQ(unpadded->fwd.runs[0].name, "all") << "the forward of the same run, not the faster one";
}

// StoredTimes::Sum is the d_ff answer's shortcut: it must be exactly the sum
// of Time's parts, whatever answers the set (one run, a pool, the model).
TEST_F(StoreAnswersTest, ASetsSumIsTheSumOfItsTimedPartsLatestPooledAndPredicted) {
  Sweep(R"({"name":"a","dff":[{"hidden":4096,"window":4,"pass":"train"}]})", 1.0);
  Sweep(R"({"name":"b","dff":[{"hidden":4096,"window":4,"pass":"train"}]})", 1.3);
  Sweep(R"({"name":"c","dff":[{"hidden":4096,"window":2,"pass":"train"}]})", 0.9, "GPU-fake-1");
  tuner::DffQuery q = EveryCandidate(4096, 6);
  q.train = true;
  auto plan = tuner::PlanDff(q);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (RunChoice runs : {RunChoice::kLatest, RunChoice::kAll}) {
    AnswerOptions options;
    options.runs = runs;
    internal::StoredTimes stored(*db_, **tuner::FindGpu("h100"), options);
    ASSERT_TRUE(stored.Prefetch(plan->gemms).ok());
    std::map<tuner::Source, int> kinds;
    std::map<std::string, const tuner::TimingLabels*> labels_of;  // by what they say
    for (const std::span<const tuner::GemmShape> set : plan->gemms) {
      auto parts = stored.Time(set);
      auto sum = stored.Sum(set);
      ASSERT_TRUE(parts.ok() && sum.ok());
      const tuner::Timing want = tuner::SumTimings(*parts);
      const tuner::Timing got = tuner::TimingOf(*sum);
      ++kinds[want.source];
      EXPECT_EQ(got.time_us, want.time_us);
      EXPECT_EQ(got.low_us, want.low_us);
      EXPECT_EQ(got.high_us, want.high_us);
      EXPECT_EQ(got.source, want.source);
      EXPECT_EQ(got.provenance, want.provenance);
      EXPECT_EQ(got.device.uuid, want.device.uuid);
      EXPECT_EQ(got.software.cublaslt, want.software.cublaslt);
      EXPECT_EQ(got.pooled, want.pooled);
      ASSERT_EQ(got.runs.size(), want.runs.size());
      for (size_t i = 0; i < want.runs.size(); ++i) {
        EXPECT_TRUE(tuner::SameRun(got.runs[i], want.runs[i]));
      }
      if (want.source != tuner::Source::kPredicted) {
        // Sums of one run (or pool, with one first run) share one copy of
        // its labels.
        std::string labels = want.device.uuid + " " + want.provenance + " runs";
        for (const tuner::RunInfo& run : want.runs) labels += " " + std::to_string(run.job_id);
        const auto shared = labels_of.try_emplace(labels, sum->labels.get()).first->second;
        EXPECT_EQ(shared, sum->labels.get()) << "a second copy of the labels " << labels;
      }
    }
    EXPECT_GT(kinds[tuner::Source::kMeasured], 0) << "the window's middle was measured";
    EXPECT_GT(kinds[tuner::Source::kPredicted], 0) << "its edges were not";
  }
}

}  // namespace
}  // namespace crest::answers
