#include "crest/tuner/dff_ranking.h"

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
  t.source = "predicted";
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
    t.source = "predicted";
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
    t.source = g.name.starts_with("mlp_down") ? "measured" : "predicted";
    return t;
  });
  ASSERT_TRUE(r.ok());
  for (const auto& row : r->rows) EXPECT_EQ(row.source, "mixed");
}

TEST(RankDff, TimerErrorsPassThrough) {
  auto r = RankDff(Query(), [](const GemmShape&) -> absl::StatusOr<Timing> {
    return absl::UnavailableError("no device");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
}

TEST(RankDff, PredictorTimerLabelsEveryRowPredicted) {
  DffQuery q = Query();
  q.window = 128;
  auto r = RankDff(q, PredictorTimer(**FindGpu("h100")));
  ASSERT_TRUE(r.ok());
  for (const auto& row : r->rows) {
    EXPECT_EQ(row.source, "predicted");
    EXPECT_EQ(row.provenance, kPredictorVersion);
  }
}

}  // namespace
}  // namespace crest
