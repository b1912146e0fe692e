#include "crest/tuner/candidates.h"

#include <array>

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

DffWindow Window(int64_t hidden, int64_t window = 128, int64_t align = 1, int64_t tp = 1) {
  DffWindow w;
  w.hidden = hidden;
  w.ratio = *ParseRatio("8/3");
  w.window = window;
  w.align = align;
  w.tp = tp;
  return w;
}

TEST(DffCandidates, DefaultWindowIsEveryIntegerWithin128OfFloor) {
  auto c = GenerateDffCandidates(Window(4096));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->naive, 10922);
  EXPECT_EQ(c->baseline, 10922);
  EXPECT_TRUE(c->baseline_note.empty());
  ASSERT_EQ(c->values.size(), 257u);
  EXPECT_EQ(c->values.front(), 10794);
  EXPECT_EQ(c->values.back(), 11050);
}

TEST(DffCandidates, AlignmentKeepsMultiplesAndStillHoldsTheBaseline) {
  auto c = GenerateDffCandidates(Window(4096, 128, 64));
  ASSERT_TRUE(c.ok());
  const std::vector<int64_t> want = {10816, 10880, 10922, 10944, 11008};
  EXPECT_EQ(c->values, want);
}

TEST(DffCandidates, AnAlignmentWiderThanTheWindowIsRefusedNamingTheLimit) {
  // Before, --align 3000 silently left only the baseline.
  auto c = GenerateDffCandidates(Window(4096, 128, 3000));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(c.status().message()),
            "align (3000) must be at most window (128): a larger step leaves no candidate but "
            "the baseline");
  auto tp = GenerateDffCandidates(Window(4096, 60, 64, 8));
  ASSERT_FALSE(tp.ok());
  EXPECT_NE(tp.status().message().find("lcm(align, tp) = 64"), std::string::npos)
      << tp.status().message();
  EXPECT_TRUE(GenerateDffCandidates(Window(4096, 128, 128)).ok()) << "a step equal to the window";
  EXPECT_TRUE(GenerateDffCandidates(Window(4096, 0, 3000)).ok()) << "window 0: the baseline only";
}

TEST(DffCandidates, TensorParallelRoundsTheBaselineDownAndSaysSo) {
  auto c = GenerateDffCandidates(Window(4096, 8, 1, 4));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->naive, 10922);
  EXPECT_EQ(c->baseline, 10920);
  EXPECT_EQ(c->baseline_note, "baseline rounded down from 10922 to 10920 to divide by tp=4");
  const std::vector<int64_t> want = {10912, 10916, 10920, 10924, 10928};
  EXPECT_EQ(c->values, want);
}

TEST(DffCandidates, ZeroWindowIsTheBaselineAlone) {
  auto c = GenerateDffCandidates(Window(8192, 0));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->values, std::vector<int64_t>{21845});
}

TEST(DffCandidates, RefusesBadFieldsByName) {
  EXPECT_EQ(std::string(GenerateDffCandidates(Window(0)).status().message()),
            "hidden must be positive (got 0)");
  EXPECT_EQ(std::string(GenerateDffCandidates(Window(4096, -1)).status().message()),
            "window must be between 0 and 65536 (got -1)");
  EXPECT_EQ(std::string(GenerateDffCandidates(Window(4096, 128, 0)).status().message()),
            "align must be positive (got 0)");
  EXPECT_EQ(std::string(GenerateDffCandidates(Window(4096, 128, 1, 2000)).status().message()),
            "tp must be at most 1024 (got 2000)");
}

TEST(HiddenSizes, StepsFromFromToTo) {
  EXPECT_EQ(*HiddenSizes(2048, 2560, 256), (std::vector<int64_t>{2048, 2304, 2560}));
  EXPECT_FALSE(HiddenSizes(4096, 2048, 128).ok());
}

TEST(HeadCounts, KeepsHeadDimsInRangeAndMultiplesOfEight) {
  auto heads = HeadCounts(4096, 64, 128);
  ASSERT_TRUE(heads.ok());
  ASSERT_EQ(heads->size(), 2u);
  EXPECT_EQ((*heads)[0].heads, 32);
  EXPECT_EQ((*heads)[0].head_dim, 128);
  EXPECT_EQ((*heads)[1].heads, 64);
  EXPECT_EQ((*heads)[1].head_dim, 64);
}

TEST(TpDegrees, PowersOfTwoDividingHeadsAndKvHeads) {
  EXPECT_EQ(*TpDegrees(32, 8, 16), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(*TpDegrees(12, 12, 8), (std::vector<int64_t>{1, 2, 4}));
}

TEST(VocabPaddings, RoundsUpToMultipleTimesTp) {
  const std::array<int64_t, 3> multiples = {1, 64, 128};
  auto pads = VocabPaddings(50257, 2, multiples);
  ASSERT_TRUE(pads.ok());
  ASSERT_EQ(pads->size(), 3u);
  EXPECT_EQ((*pads)[0].padded, 50258);
  EXPECT_EQ((*pads)[1].padded, 50304);
  EXPECT_EQ((*pads)[1].extra_rows, 47);
  EXPECT_EQ((*pads)[2].padded, 50432);
}

// crestd checks a query's cost by counting its candidates without listing
// them: the count is the list's size, and an error the same error, for
// windows, alignments, TP degrees and ratios of every kind (the baseline on
// the grid or added to it, windows clipped at 1 and at the largest d_ff).
TEST(DffCandidates, TheCountIsTheListsSizeOrItsError) {
  int checked = 0, refused = 0;
  for (const char* ratio : {"8/3", "4", "3.5", "2"}) {
    for (int64_t hidden : {1, 7, 64, 768, 4096, 5120, 8192, 12288, 100000}) {
      for (int64_t window : {0, 1, 2, 5, 63, 64, 128, 1000, 4096, 65536, 70000}) {
        for (int64_t align : {1, 3, 8, 64, 128, 256, 5000}) {
          for (int64_t tp : {1, 2, 3, 8, 1024}) {
            DffWindow w = Window(hidden, window, align, tp);
            w.ratio = *ParseRatio(ratio);
            auto listed = GenerateDffCandidates(w);
            auto counted = CountDffCandidates(w);
            ASSERT_EQ(counted.status(), listed.status())
                << ratio << " h=" << hidden << " window=" << window << " align=" << align
                << " tp=" << tp;
            if (!listed.ok()) {
              ++refused;
              continue;
            }
            ASSERT_EQ(*counted, static_cast<int64_t>(listed->values.size()))
                << ratio << " h=" << hidden << " window=" << window << " align=" << align
                << " tp=" << tp;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000) << "most windows are valid";
  EXPECT_GT(refused, 100) << "and many are refused, each the same way";
}

}  // namespace
}  // namespace crest::tuner
