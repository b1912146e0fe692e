#include "crest/tuner/dff_ranking.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

DffQuery Query(int top = 0) {
  DffQuery q;
  q.dff.hidden = 4096;
  q.dff.ratio = *ParseRatio("8/3");
  q.dff.window = 2;  // 10920 .. 10924
  q.tokens = 8192;
  q.top = top;
  return q;
}

// A scripted timer: each GEMM takes 1 µs per unit of its K or N that is
// d_ff-derived, except that d_ff = 10921 is very fast. Deterministic.
Timing Scripted(const GemmShape& g) {
  const bool special = g.k == 10921 || g.n == 2 * 10921;
  Timing t;
  t.time_us = special ? 1.0 : 10.0;
  t.source = Source::kPredicted;
  return t;
}

TEST(RankDff, RanksFastestFirstAndMeasuresSpeedupAgainstTheBaseline) {
  auto r =
      RankDff(Query(), [](const GemmShape& g) -> absl::StatusOr<Timing> { return Scripted(g); });
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->evaluated, 5);
  EXPECT_EQ(r->rows[0].d_ff, 10921);
  EXPECT_DOUBLE_EQ(r->rows[0].time_us, 2.0);  // gate_up + down
  EXPECT_DOUBLE_EQ(r->rows[0].speedup_vs_baseline, 10.0);
  EXPECT_EQ(r->rows[1].d_ff, 10920);  // ties keep ascending d_ff
  EXPECT_EQ(r->baseline.d_ff, 10922);
  EXPECT_DOUBLE_EQ(r->baseline.speedup_vs_baseline, 1.0);
  EXPECT_EQ(r->baseline.mlp_params, 3 * 4096 * 10922);
  EXPECT_EQ(r->rows[0].params_delta, -3 * 4096);
}

TEST(RankDff, TrainTimesSixGemmsPerCandidate) {
  DffQuery q = Query();
  q.train = true;
  int calls = 0;
  auto r = RankDff(q, [&](const GemmShape&) -> absl::StatusOr<Timing> {
    ++calls;
    Timing t;
    t.time_us = 1.0;
    t.source = Source::kPredicted;
    return t;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, 5 * 6);
  EXPECT_DOUBLE_EQ(r->baseline.time_us, 6.0);
}

TEST(RankDff, TopKeepsTheBestRows) {
  auto r =
      RankDff(Query(2), [](const GemmShape& g) -> absl::StatusOr<Timing> { return Scripted(g); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->evaluated, 5);
}

TEST(RankDff, MixedSourcesAreLabelledMixed) {
  auto r = RankDff(Query(), [](const GemmShape& g) -> absl::StatusOr<Timing> {
    Timing t;
    t.time_us = 1.0;
    t.source = g.name.starts_with("mlp_down") ? Source::kMeasured : Source::kPredicted;
    return t;
  });
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 5u) << "every candidate is ranked";
  for (const auto& row : r->rows) EXPECT_EQ(row.source, Source::kMixed);
  EXPECT_EQ(r->baseline.source, Source::kMixed);
}

TEST(RankDff, TimerErrorsPassThrough) {
  auto r = RankDff(Query(), [](const GemmShape&) -> absl::StatusOr<Timing> {
    return absl::UnavailableError("no device");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
}

TEST(RankDff, PredictorTimerLabelsEveryRowPredictedWithTheModelInForce) {
  DffQuery q = Query();
  q.dff.window = 128;
  const GpuSpec& h100 = **FindGpu("h100");
  auto r = RankDff(q, PredictorTimer(h100));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 257u) << "2·128 + 1 candidates";
  for (const auto& row : r->rows) {
    EXPECT_EQ(row.source, Source::kPredicted);
    EXPECT_EQ(row.provenance, ModelVersionFor(h100, DType::kBf16));
    EXPECT_TRUE(row.provenance.starts_with(kPredictorVersion)) << row.provenance;
  }
}

TEST(RankDff, PredictionsWithinTheModelsExpectedErrorAreTied) {
  DffQuery q = Query();
  q.dff.window = 128;
  q.top = 0;
  auto r = RankDff(q, PredictorTimer(**FindGpu("a100")));  // uncalibrated: +/-25%
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 257u) << "2·128 + 1 candidates";
  const DffRow& best = r->rows.front();
  EXPECT_NEAR(best.time_high_us - best.time_low_us, 2 * 0.25 * best.time_us, 1e-6);
  int64_t tied = 0;
  for (const DffRow& row : r->rows) {
    // The documented rule: a row's interval reaches the best's time.
    const bool within = row.time_us * (1 - 0.25) <= best.time_us;
    EXPECT_EQ(row.tie_group == 1, within) << row.d_ff;
    tied += row.tie_group == 1;
  }
  EXPECT_EQ(tied, r->tied_with_best);
  EXPECT_GT(tied, 1) << "an uncalibrated model claimed an order it cannot know";
}

// A set timer scripted per d_ff: (source, low, time, high) of the whole MLP,
// put on its first GEMM (the others take no time).
using Script = std::map<int64_t, std::tuple<Source, double, double, double>>;
GemmSetTimer ScriptedSets(const Script& script) {
  return [script](std::span<const GemmShape> gemms) -> absl::StatusOr<std::vector<Timing>> {
    const int64_t d_ff = gemms.back().k;  // mlp_down's K
    const auto& [source, low, time, high] = script.at(d_ff);
    std::vector<Timing> parts(gemms.size());
    for (Timing& t : parts) t.source = source;
    parts[0].low_us = low;
    parts[0].time_us = time;
    parts[0].high_us = high;
    return parts;
  };
}

// The h=4096 forward rows `crest dff --db reference.db` answered when it
// stitched runs (docs/results.md's reference database): 10880's interval
// reaches the best's time but was put in tie group 2, behind 10976, because
// each row was compared with its own group's leader only.
TEST(RankDff, ARowIsTiedWithTheBestWhenItsIntervalReachesTheBestsTime) {
  Script script;
  for (int64_t d_ff = 10794; d_ff <= 11050; ++d_ff) {
    script[d_ff] = {Source::kMeasured, 9000, 9100, 9200};  // far behind
  }
  script[10816] = {Source::kMeasured, 2793.1, 2808.0, 2809.0};
  script[10944] = {Source::kMeasured, 2807.7, 2859.1, 2992.4};
  script[10976] = {Source::kMeasured, 2911.1, 2945.2, 3062.4};
  script[10880] = {Source::kMeasured, 2762.1, 2948.6, 3055.4};
  script[10864] = {Source::kMeasured, 2938.9, 2949.5, 3101.3};
  script[11008] = {Source::kMeasured, 2817.9, 2958.1, 3085.4};
  script[10824] = {Source::kMeasured, 2923.0, 2964.7, 3157.7};
  script[10800] = {Source::kMeasured, 2815.6, 2967.2, 3083.0};
  script[10922] = {Source::kMeasured, 8100, 8168.0, 8200};
  DffQuery q = Query();
  q.dff.window = 128;
  auto r = RankDff(q, ScriptedSets(script));
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<int64_t, int> group;
  std::vector<int64_t> order;
  for (const DffRow& row : r->rows) {
    group[row.d_ff] = row.tie_group;
    order.push_back(row.d_ff);
  }
  EXPECT_EQ(group[10816], 1);
  EXPECT_EQ(group[10944], 1) << "2807.7 reaches 2808.0";
  EXPECT_EQ(group[10880], 1) << "2762.1 reaches 2808.0, though 10976 is faster";
  // 11008, 10800 and 10976 start above 2808.0: not tied with the best.
  EXPECT_EQ(group[11008], 2);
  EXPECT_EQ(group[10800], 2);
  EXPECT_EQ(group[10976], 2) << "the fastest row left leads group 2";
  EXPECT_EQ(r->tied_with_best, 3);
  // Listed group by group, each fastest first.
  EXPECT_EQ(std::vector<int64_t>(order.begin(), order.begin() + 4),
            (std::vector<int64_t>{10816, 10944, 10880, 10976}));
  EXPECT_EQ(group[10864], 2) << "2938.9 reaches 10976's 2945.2";
  EXPECT_EQ(group[10824], 2);
}

TEST(RankDff, KindsAreNeverTiedTogetherAndTheHeadlineIsTheLargestSpeedupOfItsOwnKind) {
  // 10920 and 10921 measured; the rest predicted. The baseline 10922 is
  // predicted: measured rows are sped up against its prediction, labelled.
  const Script script = {{10920, {Source::kMeasured, 99, 100, 101}},
                         {10921, {Source::kMeasured, 100.5, 101.5, 103}},
                         {10922, {Source::kPredicted, 190, 200, 210}},
                         {10923, {Source::kPredicted, 95, 99, 103}},
                         {10924, {Source::kPredicted, 150, 160, 170}}};
  const Script predicted = {{10922, {Source::kPredicted, 190, 200, 210}}};
  auto r = RankDff(Query(), ScriptedSets(script), ScriptedSets(predicted));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const DffRow& row : r->rows) EXPECT_GT(row.speedup_vs_baseline, 0) << row.d_ff;
  // 10923 (predicted, 200/99) beats 10920 (measured, 200/100): the headline.
  EXPECT_EQ(r->rows.front().d_ff, 10923);
  EXPECT_EQ(r->headline, Source::kPredicted);
  EXPECT_DOUBLE_EQ(r->rows.front().speedup_vs_baseline, 200.0 / 99);
  std::vector<Source> kinds;
  std::vector<int> groups;
  for (const DffRow& row : r->rows) {
    kinds.push_back(row.source);
    groups.push_back(row.tie_group);
  }
  EXPECT_EQ(kinds, (std::vector<Source>{Source::kPredicted, Source::kPredicted, Source::kPredicted,
                                        Source::kMeasured, Source::kMeasured}))
      << "the headline's kind first, never interleaved";
  EXPECT_EQ(groups, (std::vector<int>{1, 2, 3, 4, 5}))
      << "10920 measured at 100 is not tied with the prediction 99, though within its interval";
  const DffRow& m = r->rows[3];
  EXPECT_EQ(m.d_ff, 10920);
  EXPECT_EQ(m.speedup_basis, Source::kPredicted) << "the baseline was not measured";
  EXPECT_DOUBLE_EQ(m.speedup_vs_baseline, 2.0);
  EXPECT_DOUBLE_EQ(r->predicted_baseline_us, 0) << "the baseline is predicted itself";
  // A measured baseline: measured rows against it; predicted rows against
  // the baseline's prediction; a measured row wins an equal speed-up.
  Script measured_base = script;
  measured_base[10922] = {Source::kMeasured, 198, 198, 198};
  auto m2 = RankDff(Query(), ScriptedSets(measured_base), ScriptedSets(predicted));
  ASSERT_TRUE(m2.ok());
  EXPECT_DOUBLE_EQ(m2->predicted_baseline_us, 200);
  EXPECT_EQ(m2->rows.front().d_ff, 10923) << "200/99 > 198/100";
  for (const DffRow& row : m2->rows) EXPECT_EQ(row.speedup_basis, row.source) << row.d_ff;
  measured_base[10922] = {Source::kMeasured, 200, 200, 200};
  measured_base[10923] = {Source::kPredicted, 96, 100, 103};  // 200/100 both
  auto m3 = RankDff(Query(), ScriptedSets(measured_base), ScriptedSets(predicted));
  ASSERT_TRUE(m3.ok());
  EXPECT_EQ(m3->rows.front().source, Source::kMeasured) << "measured wins an equal speed-up";
  // --top keeps the best of each kind; tie counts cover every row.
  DffQuery top1 = Query(1);
  auto cut = RankDff(top1, ScriptedSets(script), ScriptedSets(predicted));
  ASSERT_TRUE(cut.ok());
  ASSERT_EQ(cut->rows.size(), 2u);
  EXPECT_EQ(cut->rows[0].d_ff, 10923);
  EXPECT_EQ(cut->rows[1].d_ff, 10920);
}

TEST(RankDff, TheAnswerNamesTheRunsItsRowsComeFrom) {
  const GemmSetTimer timer =
      [](std::span<const GemmShape> gemms) -> absl::StatusOr<std::vector<Timing>> {
    std::vector<Timing> parts(gemms.size());
    RunInfo run;
    run.job_id = gemms.back().k % 2 == 0 ? 1 : 2;
    for (Timing& t : parts) {
      t.source = Source::kMeasured;
      t.time_us = 10;
      t.runs = {run};
    }
    return parts;
  };
  auto r = RankDff(Query(), timer);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->runs.size(), 2u);
  for (const DffRow& row : r->rows) {
    ASSERT_EQ(row.runs.size(), 1u);
    EXPECT_EQ(row.runs[0].job_id, row.d_ff % 2 == 0 ? 1 : 2);
  }
}

// A sum's labels are shared by the sums of one run and copied into the rows
// an answer keeps: each kept row and the baseline must say exactly what the
// timer said of its candidate, with or without a summer, whatever the top,
// and the answer's runs are every row's, kept or not.
TEST(RankDff, EveryKeptRowAndTheBaselineCarryTheirCandidatesLabelsWhateverTheTop) {
  const auto labelled = [](int64_t d_ff, Timing& t) {
    RunInfo run;
    run.job_id = d_ff % 2 == 0 ? 1 : 2;
    run.job_uid = "uid-" + std::to_string(run.job_id);
    t.source = Source::kMeasured;
    t.provenance = "measured by job " + std::to_string(run.job_id);
    t.device.uuid = "GPU-" + std::to_string(run.job_id);
    t.software.cublaslt = 130100 + run.job_id;
    t.runs = {run};
  };
  const GemmSetTimer timer =
      [&](std::span<const GemmShape> gemms) -> absl::StatusOr<std::vector<Timing>> {
    const int64_t d_ff = gemms.back().k;  // the down projection's K
    std::vector<Timing> parts(gemms.size());
    for (Timing& t : parts) {
      t.time_us = d_ff == 10921 ? 1 : 10 + static_cast<double>(d_ff % 3);
      labelled(d_ff, t);
    }
    return parts;
  };
  const GemmSetSummer summer = [&](std::span<const GemmShape> gemms) -> absl::StatusOr<SetSum> {
    auto parts = timer(gemms);
    if (!parts.ok()) return parts.status();
    return SetSumOf(SumTimings(*parts));
  };
  for (int top : {0, 1, 3}) {
    for (bool with_summer : {false, true}) {
      const DffQuery q = Query(top);
      auto plan = PlanDff(q);
      ASSERT_TRUE(plan.ok()) << plan.status();
      auto r = RankDff(q, *plan, timer, {}, {}, with_summer ? summer : GemmSetSummer());
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->rows.size(), top == 0 ? 5u : static_cast<size_t>(top));
      EXPECT_EQ(r->rows.front().d_ff, 10921);
      ASSERT_EQ(r->runs.size(), 2u) << "top " << top << ": the runs of every row, kept or not";
      std::vector<DffRow> rows = r->rows;
      rows.push_back(r->baseline);
      for (const DffRow& row : rows) {
        Timing want;
        labelled(row.d_ff, want);
        EXPECT_EQ(row.provenance, want.provenance) << "d_ff " << row.d_ff << ", top " << top;
        EXPECT_EQ(row.device.uuid, want.device.uuid) << row.d_ff;
        EXPECT_EQ(row.software.cublaslt, want.software.cublaslt) << row.d_ff;
        ASSERT_EQ(row.runs.size(), 1u) << row.d_ff;
        EXPECT_TRUE(SameRun(row.runs[0], want.runs[0])) << row.d_ff;
      }
    }
  }
}

TEST(RankDff, PredictionsWithoutAnIntervalAreExact) {
  auto r =
      RankDff(Query(), [](const GemmShape& g) -> absl::StatusOr<Timing> { return Scripted(g); });
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 5u) << "every candidate is ranked";
  for (const DffRow& row : r->rows) {
    EXPECT_DOUBLE_EQ(row.time_low_us, row.time_us);
    EXPECT_DOUBLE_EQ(row.time_high_us, row.time_us);
  }
  // 10921 alone is fast; the other four take exactly the same time: one group.
  EXPECT_EQ(r->rows[0].tie_group, 1);
  EXPECT_EQ(r->tied_with_best, 1);
  for (size_t i = 1; i < r->rows.size(); ++i) EXPECT_EQ(r->rows[i].tie_group, 2);
}

}  // namespace
}  // namespace crest::tuner
