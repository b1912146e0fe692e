#include "crest/sweep/spec.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "crest/tuner/dff_ranking.h"
#include "gtest/gtest.h"

namespace crest::sweep {
namespace {

std::string Message(const std::string& json) {
  auto spec = ParseSweepSpec(json);
  EXPECT_FALSE(spec.ok()) << json;
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(SweepSpec, DffStudyExpandsToTheMlpGemmsOfEveryCandidate) {
  auto spec = ParseSweepSpec(R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 2}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->gpu, "h100");
  EXPECT_EQ(spec->gemms.size(), 5u * 2);  // 5 candidates × (gate_up, down)
  auto train = ParseSweepSpec(R"({"dff": [{"hidden": 4096, "window": 2, "pass": "train"}]})");
  ASSERT_TRUE(train.ok());
  EXPECT_EQ(train->gemms.size(), 5u * 6);
}

std::string KeyOf(const tuner::GemmShape& g) {
  return std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) + "x" +
         std::to_string(g.batch) + g.Layout();
}

TEST(SweepSpec, ShardsSplitThePlanSoTheTasksHoldEveryGemmOnce) {
  const std::string dff = R"("dff": [{"hidden": 4096, "window": 8, "pass": "train"}])";
  auto whole = ParseSweepSpec("{" + dff + "}");
  ASSERT_TRUE(whole.ok());
  std::vector<std::string> seen;
  std::set<std::string> identities;
  for (int i = 0; i < 3; ++i) {
    auto part = ParseSweepSpec("{" + dff + R"(, "shard": {"index": )" + std::to_string(i) +
                               R"(, "count": 3}})");
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_NEAR(static_cast<double>(part->gemms.size()),
                static_cast<double>(whole->gemms.size()) / 3.0, 1.0);
    for (const tuner::GemmShape& g : part->gemms) seen.push_back(KeyOf(g));
    identities.insert(part->canonical_json);
  }
  std::vector<std::string> all;
  for (const tuner::GemmShape& g : whole->gemms) all.push_back(KeyOf(g));
  std::sort(seen.begin(), seen.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(seen, all) << "every GEMM in exactly one shard";
  EXPECT_EQ(identities.size(), 3u) << "each shard is its own job";
  EXPECT_EQ(Message("{" + dff + R"(, "shard": {"index": 3, "count": 3}})"),
            "spec.shard.index: is 3; it must be from 0 to 2");
  EXPECT_EQ(Message("{" + dff + R"(, "shard": {"index": 0, "count": 0}})"),
            "spec.shard.count: is 0; it must be from 1 to 65536");
  EXPECT_EQ(Message("{" + dff + R"(, "shard": {"index": 0}})"),
            "spec.shard: must give both index and count");
  EXPECT_EQ(
      Message(R"({"gemms": [{"m": 64, "n": 64, "k": 64}], "shard": {"index": 1, "count": 2}})"),
      "spec.shard: task 1 of 2 has no GEMMs: the plan holds 1; use at most 1 tasks");
}

TEST(SweepSpec, AnAdaptivePlanIsItsOwnJobAndNeedsDffStudiesUnsharded) {
  const std::string dff = R"("dff": [{"hidden": 4096}])";
  auto full = ParseSweepSpec("{" + dff + R"(, "plan": "full"})");
  auto plain = ParseSweepSpec("{" + dff + "}");
  auto adaptive = ParseSweepSpec("{" + dff + R"(, "plan": "adaptive"})");
  ASSERT_TRUE(full.ok() && plain.ok() && adaptive.ok());
  EXPECT_FALSE(full->adaptive);
  EXPECT_TRUE(adaptive->adaptive);
  EXPECT_EQ(full->canonical_json, plain->canonical_json) << "full is the default";
  EXPECT_NE(adaptive->canonical_json, full->canonical_json) << "an adaptive sweep is another job";
  EXPECT_EQ(adaptive->gemms.size(), full->gemms.size()) << "the plan it may time";
  EXPECT_EQ(Message("{" + dff + R"(, "plan": "some"})"),
            "spec.plan: must be \"full\" or \"adaptive\"");
  EXPECT_EQ(Message(R"({"gemms": [{"m": 8, "n": 8, "k": 8}], "plan": "adaptive"})"),
            "spec.plan: \"adaptive\" chooses among d_ff candidates; the spec has no \"dff\" study");
  EXPECT_EQ(Message("{" + dff + R"(, "plan": "adaptive", "shard": {"index": 0, "count": 2}})"),
            "spec.plan: \"adaptive\" decides its GEMMs as it times them; it cannot be sharded");
}

TEST(SweepSpec, CanonicalTextIsTheSameForTheSameSweep) {
  auto a = ParseSweepSpec(R"({"dff": [{"hidden": 4096}], "gpu": "h100"})");
  auto b = ParseSweepSpec(R"({"gpu":"h100","dff":[{"window":128,"hidden":4096,"ratio":"8/3"}]})");
  auto c = ParseSweepSpec(R"({"gpu":"h100","dff":[{"hidden":4096,"window":64}]})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->canonical_json, b->canonical_json);
  EXPECT_NE(a->canonical_json, c->canonical_json);
}

TEST(SweepSpec, ModelsExpandListsAndRangesAndNoteSkippedCombinations) {
  auto spec = ParseSweepSpec(R"({"models": [{"name": "heads", "hidden": 4096,
      "heads": [16, 32, 64], "d_ff": 11008, "vocab": 32000, "seq": 2048, "tp": [1, 2, 4, 8, 3],
      "pass": "fwd"}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->notes.size(), 1u);
  EXPECT_NE(spec->notes[0].find("skipped 3 of 15"), std::string::npos) << spec->notes[0];
  EXPECT_GT(spec->gemms.size(), 20u);
}

TEST(SweepSpec, GemmListWithAKRangeAndDuplicatesKeptOnce) {
  auto spec = ParseSweepSpec(R"({"gemms": [
      {"m": 4096, "n": 4096, "k": {"from": 10822, "to": 11022}, "batch": 4, "dtype": "fp16"},
      {"m": 4096, "n": 4096, "k": 10900, "batch": 4, "dtype": "fp16"}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->gemms.size(), 201u);
  EXPECT_EQ(spec->gemms[0].dtype, tuner::DType::kFp16);
  EXPECT_EQ(spec->gemms[0].batch, 4);
}

TEST(SweepSpec, RefusesBadSpecsNamingThePath) {
  EXPECT_EQ(Message("not json"), "spec: is not valid JSON");
  EXPECT_EQ(Message("{}"), "spec: is empty: give at least one of dff, models, gemms");
  EXPECT_EQ(Message(R"({"dff": [{"hidden": 4096, "windw": 3}]})"),
            "spec.dff[0]: unknown field 'windw'");
  EXPECT_EQ(Message(R"({"dff": [{"hidden": "big"}]})"),
            "spec.dff[0].hidden: must be a whole number (got \"big\")");
  EXPECT_EQ(Message(R"({"dff": [{"hidden": 0}]})"), "spec.dff[0]: hidden must be positive (got 0)");
  EXPECT_EQ(Message(R"({"dff": [{"hidden": 4096, "ratio": "8/0"}]})").find("spec.dff[0]: ratio:"),
            0u);
  EXPECT_EQ(Message(R"({"version": 9, "dff": []})"),
            "spec.version: is 9; this crest reads version 1");
  EXPECT_EQ(Message(R"({"models": [{"hidden": 4096}]})"), "spec.models[0]: heads is required");
  EXPECT_EQ(Message(R"({"models": [{"hidden": 4096, "heads": 32, "d_ff": 11008, "vocab": 32000,
      "seq": 4096, "tp": [3, 5]}]})"),
            "spec.models[0]: no valid configuration (heads (32) must be divisible by tp (3))");
  EXPECT_EQ(Message(R"({"gemms": [{"m": 1, "n": 1, "k": {"from": 5, "to": 1}}]})"),
            "spec.gemms[0].k: to (1) must be at least from (5)");
  EXPECT_EQ(Message(R"({"gemms": [{"m": 0, "n": 1, "k": 1}]})"),
            "spec.gemms[0]: m must be positive (got 0)");
  EXPECT_EQ(Message(R"({"gemms": [{"m": 1, "n": 1, "k": 1, "layout": "XX"}]})"),
            "spec.gemms[0].layout: must be NT, NN, TN or TT");
  EXPECT_EQ(Message(R"({"gemms": [{"m": {"from": 1, "to": 2000}, "n": {"from": 1, "to": 2000},
      "k": 1}]})"),
            "spec.gemms[0]: expands to more than 2000000 GEMMs, the limit");
}

// What an outside audit sent: a range at int64's end looped without end
// (x += step overflowed) and grew crestd by 0.3 GB/s.
TEST(SweepSpec, ARangeAtTheEndOfInt64IsRefusedNamingTheFieldAndItsLimit) {
  EXPECT_EQ(Message(R"({"gemms": [{"m": {"from": 9223372036854775807, "to": 9223372036854775807},
      "n": 1, "k": 1}]})"),
            "spec.gemms[0].m.from: is 9223372036854775807; it must be from 0 to 16777216");
  EXPECT_EQ(Message(R"({"models": [{"hidden": 4096, "heads": 32, "d_ff": 11008, "vocab": 32000,
      "seq": [4096, -1]}]})"),
            "spec.models[0].seq[1]: is -1; it must be from 0 to 2097152");
  EXPECT_EQ(Message(R"({"dff": [{"hidden": 4096, "tokens": 9223372036854775807}]})"),
            "spec.dff[0].tokens: is 9223372036854775807; it must be from 0 to 16777216");
}

TEST(SweepSpec, ANumberBeyondInt64IsReportedAsTheUserWroteItNeverWrapped) {
  EXPECT_EQ(Message(R"({"gemms": [{"m": 1, "n": 1, "k": {"from": 1, "to": 8,
      "step": 18446744073709551615}}]})"),
            "spec.gemms[0].k.step: is 18446744073709551615, beyond the largest whole number "
            "(9223372036854775807)");
  EXPECT_EQ(Message(R"({"gemms": [{"m": 1e30, "n": 1, "k": 1}]})"),
            "spec.gemms[0].m: must be a whole number (got 1e+30)");
}

TEST(SweepSpec, AStepLargerThanTheRangeGivesItsFirstValueWithoutOverflow) {
  auto spec = ParseSweepSpec(R"({"gemms": [{"m": 64, "n": 64,
      "k": {"from": 16777000, "to": 16777216, "step": 9223372036854775807}}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->gemms.size(), 1u);
  EXPECT_EQ(spec->gemms[0].k, 16777000);
}

TEST(SweepSpec, APlanIsRefusedOverItsLimitNamingWhatSetsIt) {
  const std::string three = R"({"gemms": [{"m": 64, "n": 64, "k": [64, 128, 192]}]})";
  EXPECT_TRUE(ParseSweepSpec(three, {3, "--max-job-gemms"}).ok());
  auto over = ParseSweepSpec(three, {2, "--max-job-gemms"});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "spec.gemms[0]: expands to more than 2 GEMMs, the limit (--max-job-gemms)");
  // A d_ff window is counted as it expands: its 257 candidates pass 2 GEMMs.
  auto dff = ParseSweepSpec(R"({"dff": [{"hidden": 4096}]})", {2, "--max-job-gemms"});
  ASSERT_FALSE(dff.ok());
  EXPECT_EQ(dff.status().message(),
            "spec.dff[0]: the plan exceeds 2 GEMMs, the limit (--max-job-gemms); split the spec");
}

TEST(SweepSpec, AKeyGivenTwiceInOneObjectIsRefused) {
  EXPECT_EQ(Message(R"({"gemms": [{"m": 64, "m": 128, "n": 64, "k": 64}]})"),
            "spec: gives the key \"m\" twice in one object; give each key once");
  // The same key in different objects is fine.
  EXPECT_TRUE(ParseSweepSpec(R"({"gemms": [{"m": 64, "n": 64, "k": 64}, {"m": 8, "n": 8,
      "k": 8}]})")
                  .ok());
}

TEST(SweepSpec, NamesAndTheWholeTextAreBounded) {
  const std::string long_name(kMaxSpecNameBytes + 1, 'x');
  EXPECT_EQ(Message(R"({"name": ")" + long_name + R"(", "dff": [{"hidden": 4096}]})"),
            "spec.name: is 257 bytes long; at most 256");
  EXPECT_EQ(Message(R"({"gemms": [{"name": ")" + long_name + R"(", "m": 8, "n": 8, "k": 8}]})"),
            "spec.gemms[0].name: is 257 bytes long; at most 256");
  const std::string huge =
      R"({"dff": [{"hidden": 4096}], "gpu": ")" + std::string(kMaxSpecBytes, 'h') + R"("})";
  EXPECT_EQ(Message(huge).find("spec: is 1048"), 0u) << Message(huge).substr(0, 80);
}

TEST(SweepSpec, TheMeasureSectionSaysHowAndIsPartOfTheJobOnlyWhenNotTheDefault) {
  const std::string dff = R"("dff": [{"hidden": 4096, "window": 1}])";
  auto plain = ParseSweepSpec("{" + dff + "}");
  auto defaults = ParseSweepSpec(R"({"measure": {"cache": "cold", "top_k": 8}, )" + dff + "}");
  auto warm = ParseSweepSpec(
      R"({"measure": {"cache": "warm", "clocks": "burst", "top_k": 2, "max_seconds": 1.5}, )" +
      dff + "}");
  ASSERT_TRUE(plain.ok() && defaults.ok() && warm.ok()) << warm.status();
  EXPECT_EQ(plain->canonical_json, defaults->canonical_json)
      << "spelling out the defaults made a different job";
  EXPECT_EQ(plain->canonical_json.find("measure"), std::string::npos);
  EXPECT_NE(warm->canonical_json, plain->canonical_json);
  EXPECT_EQ(warm->measure.mode.cache, tuner::CacheMode::kWarm);
  EXPECT_EQ(warm->measure.mode.clocks, tuner::ClockPolicy::kBurst);
  EXPECT_EQ(warm->measure.top_k, 2);
  EXPECT_DOUBLE_EQ(warm->measure.max_seconds, 1.5);
  EXPECT_EQ(warm->measure.min_samples, measure::MeasureOptions{}.min_samples);
  // The canonical text holds every field, so the same method is the same job.
  EXPECT_NE(warm->canonical_json.find(R"("min_samples":6)"), std::string::npos)
      << warm->canonical_json;
}

TEST(SweepSpec, TheRaceIsOnByDefaultKeepsItsStudiesAndIsRefusedOutOfRangeByName) {
  const std::string dff = R"("dff": [{"hidden": 4096, "window": 1, "pass": "train"}])";
  auto plain = ParseSweepSpec("{" + dff + "}");
  auto same =
      ParseSweepSpec(R"({"measure": {"race": {"enabled": true, "window": 0.03}}, )" + dff + "}");
  auto tuned = ParseSweepSpec(
      R"({"measure": {"race": {"window": 0.05, "resolution": 0.005, "max_candidates": 4}}, )" +
      dff + "}");
  ASSERT_TRUE(plain.ok() && same.ok() && tuned.ok()) << tuned.status();
  EXPECT_TRUE(plain->measure.race.enabled);
  EXPECT_EQ(plain->canonical_json, same->canonical_json) << "the default race is the same job";
  EXPECT_DOUBLE_EQ(tuned->measure.race.window, 0.05);
  EXPECT_DOUBLE_EQ(tuned->measure.race.resolution, 0.005);
  EXPECT_EQ(tuned->measure.race.max_candidates, 4);
  ASSERT_EQ(plain->dff.size(), 1u);
  EXPECT_EQ(tuner::DffStudyKey(plain->dff.front()),
            "dff hidden=4096 tokens=8192 tp=1 bf16 train fused");
  const std::string tail = ", " + dff + "}";
  EXPECT_EQ(Message(R"({"measure": {"race": {"windw": 0.1}})" + tail),
            "spec.measure.race: unknown field 'windw'");
  EXPECT_EQ(
      Message(R"({"measure": {"race": {"max_candidates": 1}})" + tail),
      "spec.measure.race.max_candidates (--race-candidates): must be between 2 and 32 (got 1)");
  EXPECT_EQ(Message(R"({"measure": {"race": {"resolution": 0.5}})" + tail),
            "spec.measure.race.resolution (--race-resolution): must be in (0, 0.2] (got 0.5)");
  EXPECT_EQ(Message(R"({"measure": {"race": {"enabled": "yes"}})" + tail),
            "spec.measure.race.enabled: must be true or false");
}

TEST(SweepSpec, TheRaceRacesTheFastestAlgorithmsAnswerUnlessToldBothOrTheFirstChoices) {
  const std::string dff = R"(, "dff": [{"hidden": 4096, "window": 1}]})";
  auto plain = ParseSweepSpec("{" + dff.substr(2));
  auto both = ParseSweepSpec(R"({"measure": {"race": {"algos": ["best", "default"]}})" + dff);
  auto first = ParseSweepSpec(R"({"measure": {"race": {"algos": ["default"]}})" + dff);
  ASSERT_TRUE(plain.ok() && both.ok() && first.ok()) << both.status();
  EXPECT_EQ(plain->measure.race.algos, std::vector<tuner::AlgoChoice>{tuner::AlgoChoice::kBest});
  EXPECT_EQ(both->measure.race.algos, (std::vector<tuner::AlgoChoice>{
                                          tuner::AlgoChoice::kBest, tuner::AlgoChoice::kDefault}));
  EXPECT_EQ(first->measure.race.algos, std::vector<tuner::AlgoChoice>{tuner::AlgoChoice::kDefault});
  EXPECT_NE(both->canonical_json, plain->canonical_json) << "another method, another job";
  EXPECT_NE(both->canonical_json.find(R"("algos":["best","default"])"), std::string::npos)
      << both->canonical_json;
  const std::string once =
      "spec.measure.race.algos (--race-algos): must name best, default or both, each once";
  EXPECT_EQ(Message(R"({"measure": {"race": {"algos": []}})" + dff), once);
  EXPECT_EQ(Message(R"({"measure": {"race": {"algos": ["best", "best"]}})" + dff), once);
  EXPECT_EQ(Message(R"({"measure": {"race": {"algos": ["best", "default", "best"]}})" + dff), once);
  EXPECT_EQ(Message(R"({"measure": {"race": {"algos": ["fastest"]}})" + dff),
            R"(spec.measure.race.algos: must be a list of "best" and/or "default")");
  EXPECT_EQ(Message(R"({"measure": {"race": {"algos": "best"}})" + dff),
            R"(spec.measure.race.algos: must be a list of "best" and/or "default")");
}

TEST(SweepSpec, ABadMeasureFieldNamesItsPathAndLimit) {
  const std::string dff = R"(, "dff": [{"hidden": 4096}]})";
  EXPECT_EQ(Message(R"({"measure": {"cache": "lukewarm"})" + dff),
            "spec.measure.cache: must be cold or warm");
  EXPECT_EQ(Message(R"({"measure": {"clocks": "boost"})" + dff),
            "spec.measure.clocks: must be sustained or burst");
  EXPECT_EQ(Message(R"({"measure": {"top_k": 0})" + dff),
            "spec.measure.top_k (--top-k): must be between 1 and 64 (got 0)");
  EXPECT_EQ(Message(R"({"measure": {"max_noise": "low"})" + dff),
            "spec.measure.max_noise: must be a number");
  EXPECT_EQ(Message(R"({"measure": {"warmup": 3})" + dff), "spec.measure: unknown field 'warmup'");
}

// A spec's d_ff entry that gives only the hidden size plans what the
// defaults of every other question plan (defaults.h).
TEST(SweepSpec, ADffEntryLeftAloneIsTheDefaultQuery) {
  auto spec = ParseSweepSpec(R"({"dff": [{"hidden": 4096}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  tuner::DffQuery q;
  q.dff.hidden = 4096;
  auto plan = tuner::PlanDff(q);
  ASSERT_TRUE(plan.ok());
  std::vector<tuner::GemmShape> expected;
  for (const auto& gemms : plan->gemms) expected.insert(expected.end(), gemms.begin(), gemms.end());
  ASSERT_EQ(spec->gemms.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(spec->gemms[i].m, expected[i].m) << i;
    EXPECT_EQ(spec->gemms[i].n, expected[i].n) << i;
    EXPECT_EQ(spec->gemms[i].k, expected[i].k) << i;
    EXPECT_EQ(spec->gemms[i].dtype, expected[i].dtype) << i;
  }
}

}  // namespace
}  // namespace crest::sweep
