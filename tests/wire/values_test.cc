#include "crest/wire/values.h"

#include <gtest/gtest.h>

namespace crest::wire {
namespace {

TEST(WireSource, AnswerSourcesSurviveTheWire) {
  for (tuner::Source s :
       {tuner::Source::kMeasured, tuner::Source::kPredicted, tuner::Source::kMixed}) {
    EXPECT_EQ(SourceOf(ProtoSource(s)), s) << tuner::SourceName(s);
  }
}

TEST(WireSource, ImportedAndUnknownHaveNoWireValue) {
  EXPECT_EQ(ProtoSource(tuner::Source::kImported), v1::SOURCE_UNSPECIFIED);
  EXPECT_EQ(ProtoSource(tuner::Source::kUnknown), v1::SOURCE_UNSPECIFIED);
  EXPECT_EQ(SourceOf(v1::SOURCE_UNSPECIFIED), tuner::Source::kUnknown);
}

TEST(WireDType, EveryDTypeSurvivesTheWire) {
  for (tuner::DType d : {tuner::DType::kFp32, tuner::DType::kTf32, tuner::DType::kFp16,
                         tuner::DType::kBf16, tuner::DType::kFp8E4M3}) {
    EXPECT_EQ(*DTypeOf(ProtoDType(d), "dtype"), d);
  }
  EXPECT_EQ(*DTypeOf(v1::DTYPE_UNSPECIFIED, "dtype"), tuner::DType::kBf16);
  auto unknown = DTypeOf(static_cast<v1::DType>(42), "gemm.dtype");
  ASSERT_FALSE(unknown.ok()) << "an unknown value is not the default";
  EXPECT_EQ(unknown.status().message().substr(0, 34), "gemm.dtype: unknown dtype value 42");
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
