#include "crest/wire/convert.h"

#include <gtest/gtest.h>

#include "crest/tuner/defaults.h"

namespace crest::wire {
namespace {

// A request that leaves a field out means the default of defaults.h, the
// same as a DffQuery left alone.
TEST(WireDff, ARaceAndEachRowsStandingSurviveTheWire) {
  tuner::DffRanking r;
  tuner::DffRow leader;
  leader.d_ff = 10944;
  leader.source = tuner::Source::kMeasured;
  leader.tie_group = 1;
  leader.runs = {tuner::RunInfo{3, "uid", "nightly", 7, "GPU-1", "node1"}};
  leader.race_verdict = "leader";
  leader.race_ratio = leader.race_ratio_low = leader.race_ratio_high = 1;
  tuner::DffRow slower = leader;
  slower.d_ff = 11008;
  slower.tie_group = 2;
  slower.race_verdict = "slower";
  slower.race_ratio = 1.02;
  slower.race_ratio_low = 1.01;
  slower.race_ratio_high = 1.03;
  tuner::DffRow unraced = leader;
  unraced.d_ff = 10880;
  unraced.race_verdict.clear();
  r.rows = {leader, slower, unraced};
  r.runs = leader.runs;
  tuner::DffRaceInfo info;
  info.race_id = 9;
  info.run = leader.runs.front();
  info.candidates = 2;
  info.rounds = 40;
  info.resolution = 0.01;
  info.seconds = 12.5;
  info.settled = true;
  info.stop_reason = "resolved";
  r.race = info;
  v1::QueryDffResponse wire;
  Fill(r, **tuner::FindGpu("h100"), &wire);
  const tuner::DffRanking back = RankingOf(wire, {});
  ASSERT_TRUE(back.race.has_value());
  EXPECT_EQ(back.race->race_id, 9);
  EXPECT_EQ(back.race->run.job_id, 3);
  EXPECT_EQ(back.race->rounds, 40);
  EXPECT_EQ(back.race->stop_reason, "resolved");
  EXPECT_TRUE(back.race->settled);
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_EQ(back.rows[1].race_verdict, "slower");
  EXPECT_DOUBLE_EQ(back.rows[1].race_ratio_low, 1.01);
  EXPECT_TRUE(back.rows[2].race_verdict.empty()) << "an unraced row stays unraced";

  r.race.reset();
  r.race_note = "race 9 (of job 3) did not time d_ff 10880, which is tied with the best here";
  v1::QueryDffResponse noted;
  Fill(r, **tuner::FindGpu("h100"), &noted);
  const tuner::DffRanking note = RankingOf(noted, {});
  EXPECT_FALSE(note.race.has_value());
  EXPECT_EQ(note.race_note, r.race_note);
}

TEST(WireDefaults, AnEmptyFieldIsTheDefaultOfEveryQuery) {
  v1::QueryDffRequest request;
  request.set_hidden(4096);
  request.set_gpu("h100");
  auto q = DffQueryOf(request);
  ASSERT_TRUE(q.ok()) << q.status();
  const tuner::DffQuery defaults;
  EXPECT_EQ(q->dff.ratio.text, tuner::kDefaultRatio);
  EXPECT_EQ(q->dff.ratio.text, defaults.dff.ratio.text);
  EXPECT_EQ(q->dff.window, tuner::kDefaultWindow);
  EXPECT_EQ(q->dff.window, defaults.dff.window);
  EXPECT_EQ(q->dff.align, defaults.dff.align);
  EXPECT_EQ(q->dff.tp, defaults.dff.tp);
  EXPECT_EQ(q->tokens, tuner::kDefaultTokens);
  EXPECT_EQ(q->tokens, defaults.tokens);
  EXPECT_EQ(tuner::DTypeName(q->dtype), tuner::kDefaultDtype);
  EXPECT_EQ(q->train, defaults.train);
  auto options = OptionsOf(request.pin(), request.mode(), request.runs(), request.algo());
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->runs, answers::AnswerOptions{}.runs);
  EXPECT_EQ(options->mode, answers::AnswerOptions{}.mode);
  EXPECT_EQ(options->algo, tuner::AlgoChoice::kBest) << "an empty algo is best";
  auto first = OptionsOf(request.pin(), request.mode(), "", "default");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->algo, tuner::AlgoChoice::kDefault);
  auto bad = OptionsOf(request.pin(), request.mode(), "", "fastest");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "algo: 'fastest' is not best or default");
}

// A compared GEMM's verdict survives the wire; a word that is not a verdict
// is an error, never read as "same".
TEST(WireCompare, VerdictsSurviveTheWireAndAnUnknownOneIsRefused) {
  answers::CompareReport report;
  answers::GemmComparison c;
  c.gpu_model = "H100-SXM";
  c.key.m = 8192;
  c.key.n = 4096;
  c.key.k = 10976;
  c.verdict = answers::Verdict::kUnresolved;
  report.gemms = {c};
  v1::CompareResponse response;
  Fill(report, 10, &response);
  int64_t left_out = -1;
  auto back = CompareReportOf(response, {}, &left_out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gemms.at(0).verdict, answers::Verdict::kUnresolved);
  EXPECT_EQ(left_out, 0);
  response.mutable_gemms(0)->set_verdict("maybe");
  auto bad = CompareReportOf(response, {}, &left_out);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("'maybe'"), std::string::npos);
}

}  // namespace
}  // namespace crest::wire
