// One table names an enum both ways, and the tables built on it (job states,
// compare verdicts) read back every name they print and nothing else.
#include "crest/common/name_table.h"

#include "crest/answers/compare.h"
#include "crest/store/records.h"
#include "gtest/gtest.h"

namespace crest {
namespace {

enum class Color { kRed, kGreen, kBlue };
constexpr NameTable<Color, 2> kColors = {{{Color::kRed, "red"}, {Color::kGreen, "green"}}};

TEST(NameTable, ReadsBothWaysAndSaysWhatItLacks) {
  EXPECT_EQ(NameOf(kColors, Color::kGreen), "green");
  EXPECT_EQ(NameOf(kColors, Color::kBlue), "?");
  EXPECT_EQ(ValueNamed(kColors, "red"), Color::kRed);
  EXPECT_EQ(ValueNamed(kColors, "Red"), std::nullopt);  // exact names only
  EXPECT_EQ(ValueNamed(kColors, "?"), std::nullopt);
  static_assert(NameOf(kColors, Color::kRed) == "red");  // usable at compile time
}

TEST(NameTable, JobStatesReadBackEveryNameTheyPrint) {
  using store::JobState;
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kDone, JobState::kFailed,
                     JobState::kCancelled}) {
    EXPECT_NE(store::JobStateName(s), "?");
    EXPECT_EQ(store::ParseJobState(store::JobStateName(s)), s);
  }
  EXPECT_EQ(store::JobStateName(JobState::kCancelled), "cancelled");
  EXPECT_EQ(store::ParseJobState("canceled"), std::nullopt);
}

TEST(NameTable, CompareVerdictsReadBackEveryNameTheyPrint) {
  using answers::Verdict;
  for (Verdict v : {Verdict::kFaster, Verdict::kSame, Verdict::kSlower, Verdict::kUnresolved}) {
    EXPECT_NE(answers::VerdictName(v), "?");
    EXPECT_EQ(answers::ParseVerdict(answers::VerdictName(v)), v);
  }
  EXPECT_EQ(answers::VerdictName(Verdict::kSlower), "slower");
  EXPECT_EQ(answers::ParseVerdict("regressed"), std::nullopt);
}

}  // namespace
}  // namespace crest
