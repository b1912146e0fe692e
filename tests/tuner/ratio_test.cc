#include "crest/tuner/ratio.h"

#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

TEST(ParseRatio, FractionIsExact) {
  auto r = ParseRatio("8/3");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->num, 8);
  EXPECT_EQ(r->den, 3);
  EXPECT_EQ(r->FloorTimes(4096), 10922);  // what int(8/3*4096) gives
  EXPECT_EQ(r->FloorTimes(8192), 21845);
}

TEST(ParseRatio, DecimalIsExactAndReduced) {
  auto r = ParseRatio("2.6875");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->num, 43);
  EXPECT_EQ(r->den, 16);
  EXPECT_EQ(r->FloorTimes(4096), 11008);
  EXPECT_EQ(ParseRatio("4")->FloorTimes(1000), 4000);
  EXPECT_EQ(ParseRatio("12/6")->num, 2);
}

class RefusesBadRatio : public ::testing::TestWithParam<const char*> {};

TEST_P(RefusesBadRatio, NamesTheRatioField) {
  auto r = ParseRatio(GetParam());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::string(r.status().message()).starts_with("ratio: ")) << r.status();
}

INSTANTIATE_TEST_SUITE_P(Text, RefusesBadRatio,
                         ::testing::Values("", "abc", "8/0", "0", "0/3", "-1", "65", "8/3/2",
                                           "1.2.3", "2.5/3", ".", "1e3", "1.0000000001",
                                           "99999999999999999999"));

}  // namespace
}  // namespace crest::tuner
