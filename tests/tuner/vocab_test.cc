#include "crest/tuner/vocab.h"

#include <map>

#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/timing_ops.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

VocabQuery Query(int64_t vocab, int64_t tp = 1) {
  VocabQuery q;
  q.vocab = vocab;
  q.hidden = 4096;
  q.tp = tp;
  return q;
}

std::vector<int64_t> Sizes(const VocabRanking& r) {
  std::vector<int64_t> out;
  for (const VocabRow& row : r.rows) out.push_back(row.padded);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(VocabPaddings, AreVPaddedToEachMultipleOf8To1024TimesTpWithTheExtraParameters) {
  auto r = RankVocabPaddings(Query(50257), EachGemm(PredictorTimer(**FindGpu("h100"))));
  ASSERT_TRUE(r.ok()) << r.status();
  // 50257 itself, then 50264 (8), 50272 (16 and 32), 50304 (64, 128), 50432, 50688, 51200.
  EXPECT_EQ(Sizes(*r), (std::vector<int64_t>{50257, 50264, 50272, 50304, 50432, 50688, 51200}));
  EXPECT_EQ(r->baseline, 50257);
  for (const VocabRow& row : r->rows) {
    EXPECT_EQ(row.extra_params, (row.padded - 50257) * 4096);
    EXPECT_EQ(row.unpadded, row.padded == 50257);
    if (row.padded == 50304) {
      EXPECT_EQ(row.multiple, 128);
    }
    if (row.padded == 50272) {
      EXPECT_EQ(row.multiple, 32);
    }
    EXPECT_GT(row.train.time_us, row.fwd.time_us) << "train adds two gradient GEMMs";
  }
}

TEST(VocabPaddings, TheUnpaddedVocabularyIsSlowerThanA64PaddedOneAsPredictedOnH100) {
  auto r = RankVocabPaddings(Query(50257), EachGemm(PredictorTimer(**FindGpu("h100"))));
  ASSERT_TRUE(r.ok());
  std::map<int64_t, const VocabRow*> by;
  for (const VocabRow& row : r->rows) by[row.padded] = &row;
  EXPECT_GT(by[50257]->train.time_us, 1.5 * by[50304]->train.time_us)
      << "an odd N misaligns the logits GEMM's output";
  EXPECT_GT(by[50304]->speedup, 1.5);
  EXPECT_EQ(r->rows.back().padded, 50257) << "ranked slowest";
}

TEST(VocabPaddings, WithTensorParallelismTheBaselineIsTheSmallestPaddingDivisibleByTp) {
  auto r = RankVocabPaddings(Query(50257, 8), EachGemm(PredictorTimer(**FindGpu("h100"))));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->baseline, 50304) << "50257 is not divisible by 8";
  for (const VocabRow& row : r->rows) {
    EXPECT_EQ(row.padded % 64, 0);
    EXPECT_EQ(row.extra_params_per_rank, row.extra_params / 8);
  }
}

TEST(VocabPaddings, MeasuredAndPredictedRowsAreRankedWithinTheirKind) {
  // 51200 is measured and slow; the rest are predicted.
  const GpuSpec& h100 = **FindGpu("h100");
  const GemmTimer predictor = PredictorTimer(h100);
  const GemmTimer timer = [&](const GemmShape& g) -> absl::StatusOr<Timing> {
    auto t = predictor(g);
    if (t.ok() && (g.m == 51200 || g.n == 51200 || g.k == 51200)) {
      t->source = Source::kMeasured;
      t->time_us *= 10;
      t->low_us = t->high_us = t->time_us;
    }
    return t;
  };
  auto r = RankVocabPaddings(Query(50257), EachGemm(timer), EachGemm(predictor));
  ASSERT_TRUE(r.ok());
  // The headline is the largest speed-up over a baseline of its own kind:
  // a predicted row; the slow measured row comes after every predicted one.
  EXPECT_EQ(r->rows.front().train.source, Source::kPredicted);
  EXPECT_EQ(r->rows.front().tie_group, 1);
  const VocabRow& measured = r->rows.back();
  EXPECT_EQ(measured.padded, 51200) << "kinds are never interleaved";
  EXPECT_EQ(measured.train.source, Source::kMeasured);
  EXPECT_EQ(measured.speedup_basis, Source::kPredicted)
      << "the baseline was not measured: its prediction, labelled";
  EXPECT_GT(measured.speedup, 0) << "never left empty";
  EXPECT_LT(measured.speedup, 1);
  for (size_t i = 0; i + 1 < r->rows.size(); ++i) {
    EXPECT_EQ(r->rows[i].train.source, Source::kPredicted);
    EXPECT_EQ(r->rows[i].speedup_basis, Source::kPredicted);
    EXPECT_NE(r->rows[i].tie_group, measured.tie_group);
  }
}

TEST(VocabPaddings, BadInputNamesTheField) {
  const GemmSetTimer timer = EachGemm(PredictorTimer(**FindGpu("h100")));
  VocabQuery q = Query(0);
  EXPECT_EQ(RankVocabPaddings(q, timer).status().message(), "vocab must be positive (got 0)");
  q = Query(50257);
  q.hidden = -1;
  EXPECT_EQ(RankVocabPaddings(q, timer).status().message(), "hidden must be positive (got -1)");
  q = Query(50257, 2048);
  EXPECT_EQ(RankVocabPaddings(q, timer).status().message(), "tp must be at most 1024 (got 2048)");
}

}  // namespace
}  // namespace crest::tuner
