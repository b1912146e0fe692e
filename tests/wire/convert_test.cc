#include "crest/wire/convert.h"

#include "crest/tuner/defaults.h"
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
    EXPECT_EQ(*DTypeOf(ProtoDType(d), "dtype"), d);
  }
  EXPECT_EQ(*DTypeOf(v1::DTYPE_UNSPECIFIED, "dtype"), DType::kBf16);
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

// A request that leaves a field out means the default of defaults.h, the
// same as a DffQuery left alone.
TEST(WireDefaults, AnEmptyFieldIsTheDefaultOfEveryQuery) {
  v1::QueryDffRequest request;
  request.set_hidden(4096);
  request.set_gpu("h100");
  auto q = DffQueryOf(request);
  ASSERT_TRUE(q.ok()) << q.status();
  const DffQuery defaults;
  EXPECT_EQ(q->dff.ratio.text, kDefaultRatio);
  EXPECT_EQ(q->dff.ratio.text, defaults.dff.ratio.text);
  EXPECT_EQ(q->dff.window, kDefaultWindow);
  EXPECT_EQ(q->dff.window, defaults.dff.window);
  EXPECT_EQ(q->dff.align, defaults.dff.align);
  EXPECT_EQ(q->dff.tp, defaults.dff.tp);
  EXPECT_EQ(q->tokens, kDefaultTokens);
  EXPECT_EQ(q->tokens, defaults.tokens);
  EXPECT_EQ(DTypeName(q->dtype), kDefaultDtype);
  EXPECT_EQ(q->train, defaults.train);
  auto options = OptionsOf(request.pin(), request.mode(), request.runs());
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->runs, answers::AnswerOptions{}.runs);
  EXPECT_EQ(options->mode, answers::AnswerOptions{}.mode);
}

}  // namespace
}  // namespace crest::wire
