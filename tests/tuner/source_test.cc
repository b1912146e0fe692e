#include "crest/tuner/source.h"

#include <gtest/gtest.h>

namespace crest::tuner {
namespace {

TEST(Source, EveryKindRoundTripsThroughItsName) {
  for (Source s : {Source::kUnknown, Source::kMeasured, Source::kPredicted, Source::kImported,
                   Source::kMixed}) {
    EXPECT_EQ(ParseSource(SourceName(s)), s) << SourceName(s);
  }
}

TEST(Source, NamesAreTheOnesTablesAndJsonShow) {
  EXPECT_EQ(SourceName(Source::kMeasured), "measured");
  EXPECT_EQ(SourceName(Source::kPredicted), "predicted");
  EXPECT_EQ(SourceName(Source::kImported), "imported");
  EXPECT_EQ(SourceName(Source::kMixed), "mixed");
}

TEST(Source, AnUnknownNameIsRefusedNotGuessed) {
  EXPECT_EQ(ParseSource("Measured"), std::nullopt);
  EXPECT_EQ(ParseSource(""), std::nullopt);
}

}  // namespace
}  // namespace crest::tuner
