#include "crest/tuner/gemm.h"

#include <string>

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

TEST(ParseLayout, ReadsEachLetterInEitherCaseAndRefusesAnyOther) {
  const struct {
    const char* text;
    bool a_transposed, b_transposed;
  } kGood[] = {{"NT", false, true}, {"nn", false, false}, {"Tn", true, false}, {"tT", true, true}};
  for (const auto& c : kGood) {
    bool a = !c.a_transposed;
    bool b = !c.b_transposed;
    ASSERT_TRUE(ParseLayout(c.text, &a, &b)) << c.text;
    EXPECT_EQ(a, c.a_transposed) << c.text;
    EXPECT_EQ(b, c.b_transposed) << c.text;
  }
  for (const char* bad : {"", "N", "NTN", "NX", "xT", "n ", "\x8eT"}) {
    bool a = true;
    bool b = false;
    EXPECT_FALSE(ParseLayout(bad, &a, &b)) << bad;
    EXPECT_TRUE(a) << "a refused layout changed the flags: " << bad;
    EXPECT_FALSE(b) << "a refused layout changed the flags: " << bad;
  }
}

}  // namespace
}  // namespace crest::tuner
