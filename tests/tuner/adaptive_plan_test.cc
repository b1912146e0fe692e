// The adaptive plan: which candidates of a d_ff window it times, and that
// it stops only when no untimed candidate could beat the ones it timed.
#include "crest/tuner/adaptive_plan.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "crest/tuner/predictor.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

DffQuery WindowQuery(int64_t hidden) {
  DffQuery q;
  q.dff.hidden = hidden;
  q.dff.ratio = *ParseRatio("8/3");
  q.dff.window = 128;
  q.tokens = 8192;
  return q;
}

using TrueTime = std::function<double(const GemmShape&)>;

struct Outcome {
  int64_t gemms_timed = 0;
  int rounds = 0;
  AdaptivePlan::StudyState state;
};

// Runs the plan to its end, timing each GEMM it asks for with `truth`.
Outcome Drive(AdaptivePlan& plan, const TrueTime& truth) {
  Outcome out;
  for (auto next = plan.Next(); !next.empty(); next = plan.Next()) {
    for (const GemmShape& g : next) plan.Record(g, truth(g));
    out.gemms_timed += static_cast<int64_t>(next.size());
    ++out.rounds;
    if (out.rounds > 1000) break;
  }
  out.state = plan.States().front();
  return out;
}

// The true best candidate of the window under `truth`, and its time.
std::pair<int64_t, double> TrueBest(const DffQuery& q, const TrueTime& truth) {
  auto plan = PlanDff(q);
  std::pair<int64_t, double> best = {0, std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i < plan->gemms.size(); ++i) {
    double t = 0;
    for (const GemmShape& g : plan->gemms[i]) t += truth(g);
    if (t < best.second) best = {plan->candidates.values[i], t};
  }
  return best;
}

// A deterministic factor in [1 - spread, 1 + spread] per GEMM.
double Jitter(const GemmShape& g, double spread) {
  const uint64_t h = static_cast<uint64_t>(g.m * 1000003 + g.n * 10007 + g.k);
  const double u = static_cast<double>((h * 2654435761u) % 1000) / 999.0;  // 0..1
  return 1 + spread * (2 * u - 1);
}

TEST(AdaptivePlan, WithTheTruthInsideTheIntervalsItFindsTheBestTimingAQuarterOfTheWindow) {
  const GpuSpec& h100 = **FindGpu("h100");
  const DffQuery q = WindowQuery(4096);
  // Every GEMM's truth lies within its predicted interval (x (1 +/- e)).
  const TrueTime truth = [&](const GemmShape& g) {
    const auto p = Predict(g, h100);
    return p->time_us * Jitter(g, 0.9 * p->expected_error);
  };
  auto plan = AdaptivePlan::Make(std::span<const DffQuery>(&q, 1), h100);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Outcome out = Drive(*plan, truth);
  EXPECT_EQ(out.state.candidates, 257);
  EXPECT_EQ(out.state.gemms, 2 * 257);
  EXPECT_LE(out.state.gemms_timed, 2 * 257 / 4) << "at most a quarter of the window's GEMMs";
  EXPECT_EQ(out.gemms_timed, out.state.gemms_timed) << "no GEMM timed twice";
  const auto [best, best_us] = TrueBest(q, truth);
  EXPECT_EQ(out.state.leader, best) << "no untimed candidate can beat the leader";
  EXPECT_DOUBLE_EQ(out.state.leader_us, best_us);
}

TEST(AdaptivePlan, AClassFasterThanItsIntervalSaysIsBoundedByWhatWasMeasured) {
  // The d_ff = 2 mod 8 (the baseline 10922 among them) run at 35% of their
  // predicted time, far beyond their interval: the fastest of the window,
  // though the model ranks them with the slow misaligned ones. The first
  // round times the baseline; its ratio lowers every bound of its class.
  const GpuSpec& h100 = **FindGpu("h100");
  const DffQuery q = WindowQuery(4096);
  const TrueTime truth = [&](const GemmShape& g) {
    const auto p = Predict(g, h100);
    const int64_t dff = g.n == 4096 ? g.k : g.n / 2;
    return p->time_us * (dff % 8 == 2 ? 0.35 : 1.0);
  };
  auto plan = AdaptivePlan::Make(std::span<const DffQuery>(&q, 1), h100);
  ASSERT_TRUE(plan.ok());
  const Outcome out = Drive(*plan, truth);
  EXPECT_EQ(out.state.leader, TrueBest(q, truth).first);
  EXPECT_GT(out.rounds, 1) << "it measured, then bounded again";
}

TEST(AdaptivePlan, ACandidateThatCannotBeTimedIsLeftToTheModelAndThePlanEnds) {
  const GpuSpec& h100 = **FindGpu("h100");
  const DffQuery q = WindowQuery(4096);
  auto plan = AdaptivePlan::Make(std::span<const DffQuery>(&q, 1), h100);
  ASSERT_TRUE(plan.ok());
  int rounds = 0;
  for (auto next = plan->Next(); !next.empty() && rounds < 1000; next = plan->Next(), ++rounds) {
    for (const GemmShape& g : next) plan->Failed(g);
  }
  EXPECT_LT(rounds, 3);
  EXPECT_EQ(plan->States().front().leader, 0);
}

TEST(AdaptivePlan, RefusesAStudyItCannotPlanNamingIt) {
  DffQuery q = WindowQuery(4096);
  q.dff.window = -1;
  auto plan = AdaptivePlan::Make(std::span<const DffQuery>(&q, 1), **FindGpu("h100"));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("dff hidden=4096"), std::string::npos)
      << plan.status().message();
}

}  // namespace
}  // namespace crest::tuner
