#include "crest/wire/convert.h"

#include <gtest/gtest.h>

namespace crest::wire {
namespace {

TEST(WireSource, AnswerSourcesSurviveTheWire) {
  for (Source s : {Source::kMeasured, Source::kPredicted, Source::kMixed}) {
    EXPECT_EQ(SourceOf(ProtoSource(s)), s) << SourceName(s);
  }
}

TEST(WireSource, ImportedAndUnknownHaveNoWireValue) {
  EXPECT_EQ(ProtoSource(Source::kImported), v1::SOURCE_UNSPECIFIED);
  EXPECT_EQ(ProtoSource(Source::kUnknown), v1::SOURCE_UNSPECIFIED);
  EXPECT_EQ(SourceOf(v1::SOURCE_UNSPECIFIED), Source::kUnknown);
}

TEST(WireDType, EveryDTypeSurvivesTheWire) {
  for (DType d : {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16, DType::kFp8E4M3}) {
    EXPECT_EQ(DTypeOf(ProtoDType(d)), d);
  }
}

TEST(WireJobState, EveryStateSurvivesTheWire) {
  for (auto s : {store::JobState::kQueued, store::JobState::kRunning, store::JobState::kDone,
                 store::JobState::kFailed, store::JobState::kCancelled}) {
    auto back = JobStateOf(ProtoJobState(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s) << store::JobStateName(s);
  }
}

}  // namespace
}  // namespace crest::wire
