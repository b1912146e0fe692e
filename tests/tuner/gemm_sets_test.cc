#include "crest/tuner/gemm_sets.h"

#include <string_view>
#include <vector>

#include "crest/tuner/dff_query.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

GemmShape Gemm(int64_t k) {
  GemmShape g;
  g.m = 8;
  g.n = 16;
  g.k = k;
  return g;
}

TEST(GemmSets, EachSetIsItsOwnGemmsInOrderAndAFailedAddLeavesNothing) {
  GemmSets sets;
  const std::vector<GemmShape> first = {Gemm(1), Gemm(2)};
  sets.Add(first);
  ASSERT_TRUE(sets.AddWith([](std::vector<GemmShape>& out) {
                    out.push_back(Gemm(3));
                    return absl::OkStatus();
                  })
                  .ok());
  const absl::Status refused = sets.AddWith([](std::vector<GemmShape>& out) {
    out.push_back(Gemm(99));  // appended, then the set fails
    return absl::InvalidArgumentError("no");
  });
  EXPECT_EQ(refused.message(), "no");
  sets.Add(std::vector<GemmShape>{});  // an empty set is a set
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets.all().size(), 3u);
  std::vector<std::vector<int64_t>> ks;
  for (std::span<const GemmShape> set : sets) {
    ks.emplace_back();
    for (const GemmShape& g : set) ks.back().push_back(g.k);
  }
  EXPECT_EQ(ks, (std::vector<std::vector<int64_t>>{{1, 2}, {3}, {}}));
  EXPECT_EQ(sets[1].data(), sets.all().data() + 2);
}

TEST(GemmSets, APlansSetsAreEachCandidatesMlpGemms) {
  DffQuery q;
  q.dff.hidden = 4096;
  q.dff.ratio = *ParseRatio("8/3");
  q.dff.window = 3;
  q.train = true;
  auto plan = PlanDff(q);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->gemms.size(), plan->candidates.values.size());
  for (size_t i = 0; i < plan->gemms.size(); ++i) {
    auto alone = DffCandidateGemms(q, plan->candidates.values[i]);
    ASSERT_TRUE(alone.ok());
    const std::span<const GemmShape> set = plan->gemms[i];
    ASSERT_EQ(set.size(), alone->size());
    for (size_t j = 0; j < set.size(); ++j) {
      EXPECT_EQ(set[j].name, (*alone)[j].name);
      EXPECT_EQ(IdentityOf(set[j]), IdentityOf((*alone)[j]));
    }
  }
  q.tokens = 0;  // every candidate's set fails: the plan is refused, naming the field
  const auto refused = PlanDff(q);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("tokens"), std::string_view::npos) << refused.status();
}

}  // namespace
}  // namespace crest::tuner
