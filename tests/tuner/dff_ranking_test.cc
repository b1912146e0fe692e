#include "crest/tuner/dff_ranking.h"

#include <map>

#include "crest/tuner/predictor.h"
#include "gtest/gtest.h"

namespace crest {
namespace {

DffQuery Query(int top = 0) {
  DffQuery q;
  q.hidden = 4096;
  q.ratio = *ParseRatio("8/3");
  q.window = 2;  // 10920 .. 10924
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
  q.window = 128;
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
  q.window = 128;
  q.top = 0;
  auto r = RankDff(q, PredictorTimer(**FindGpu("a100")));  // uncalibrated: +/-25%
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 257u) << "2·128 + 1 candidates";
  const DffRow& best = r->rows.front();
  EXPECT_NEAR(best.time_high_us - best.time_low_us, 0.25 * best.time_us, 1e-6);
  int64_t tied = 0;
  for (const DffRow& row : r->rows) {
    const bool within = row.time_us * (1 - 0.125) <= best.time_us * (1 + 0.125);
    EXPECT_EQ(row.tie_group == 1, within) << row.d_ff;
    tied += row.tie_group == 1;
  }
  EXPECT_EQ(tied, r->tied_with_best);
  EXPECT_GT(tied, 1) << "an uncalibrated model claimed an order it cannot know";
}

TEST(RankDff, RowsWhoseIntervalsReachTheBestAreTiedWithItAndSourcesAreNotMixed) {
  // d_ff → (source, low, time, high) of the whole MLP.
  const std::map<int64_t, std::tuple<Source, double, double, double>> script = {
      {10920, {Source::kMeasured, 99, 100, 101}},   {10921, {Source::kMeasured, 100.5, 101.5, 103}},
      {10922, {Source::kMeasured, 101.5, 102, 104}}, {10923, {Source::kPredicted, 101, 101, 101}},
      {10924, {Source::kMeasured, 110, 111, 112}}};
  const MlpTimer timer = [&](std::span<const GemmShape> gemms) -> absl::StatusOr<Timing> {
    const int64_t d_ff = gemms.back().k;  // mlp_down's K
    const auto& [source, low, time, high] = script.at(d_ff);
    Timing t;
    t.source = source;
    t.low_us = low;
    t.time_us = time;
    t.high_us = high;
    return t;
  };
  auto r = RankDff(Query(), timer);
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<int64_t, int> group;
  for (const DffRow& row : r->rows) group[row.d_ff] = row.tie_group;
  EXPECT_EQ(group[10920], 1);
  EXPECT_EQ(group[10921], 1) << "its interval reaches the best's";
  EXPECT_NE(group[10923], 1) << "a prediction is never tied with a measurement";
  EXPECT_NE(group[10922], 1) << "its interval lies above the best's";
  EXPECT_NE(group[10924], group[10922]);
  EXPECT_EQ(r->tied_with_best, 2);
  EXPECT_DOUBLE_EQ(r->rows.front().time_low_us, 99);
  EXPECT_DOUBLE_EQ(r->rows.front().time_high_us, 101);
  // Kinds of number are ranked apart: every measured row before the
  // prediction, though the prediction (101 us) is faster than two of them.
  std::vector<Source> order;
  for (const DffRow& row : r->rows) order.push_back(row.source);
  EXPECT_EQ(order, (std::vector<Source>{Source::kMeasured, Source::kMeasured, Source::kMeasured,
                                        Source::kMeasured, Source::kPredicted}));
  // Speed-ups compare the same kind only: the baseline 10922 is measured.
  EXPECT_DOUBLE_EQ(r->rows[0].speedup_vs_baseline, 102.0 / 100);
  EXPECT_EQ(r->rows.back().speedup_vs_baseline, 0) << "a prediction against a measurement";
  // Tie groups count every evaluated row, also those cut by --top; --top
  // keeps the best of each kind.
  DffQuery top1 = Query(1);
  auto cut = RankDff(top1, timer);
  ASSERT_TRUE(cut.ok());
  ASSERT_EQ(cut->rows.size(), 2u);
  EXPECT_EQ(cut->rows[0].d_ff, 10920);
  EXPECT_EQ(cut->rows[1].d_ff, 10923);
  EXPECT_EQ(cut->tied_with_best, 2);
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
}  // namespace crest
