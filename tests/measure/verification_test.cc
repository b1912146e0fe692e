#include "crest/measure/verification.h"

#include <bit>
#include <cmath>
#include <set>

#include "crest/measure/operand_values.h"
#include "gtest/gtest.h"

namespace crest::measure {
namespace {

TEST(OperandValues, AreNeverZeroAndExactInTheirDtype) {
  for (tuner::DType d : {tuner::DType::kFp32, tuner::DType::kTf32, tuner::DType::kFp16,
                         tuner::DType::kBf16, tuner::DType::kFp8E4M3}) {
    const int bits = MantissaBits(d);
    int negative = 0;
    std::set<float> distinct;
    for (uint64_t i = 0; i < 20000; ++i) {
      const float v = OperandValue(7, i, bits);
      ASSERT_NE(v, 0.0f);
      ASSERT_GE(std::abs(v), 0.25f);
      ASSERT_LT(std::abs(v), 1.0f);
      // No mantissa bit below the dtype's: stored without rounding.
      const auto raw = std::bit_cast<uint32_t>(v);
      ASSERT_EQ(raw & ((uint32_t{1} << (23 - bits)) - 1), 0u) << tuner::DTypeName(d) << " " << v;
      negative += v < 0;
      distinct.insert(v);
    }
    EXPECT_NEAR(negative, 10000, 400) << tuner::DTypeName(d);
    // Every value the dtype's bits allow turns up (nearly all, for the wide ones).
    const size_t possible = std::min<size_t>(20000, size_t{4} << bits);
    EXPECT_GE(static_cast<double>(distinct.size()), 0.98 * static_cast<double>(possible))
        << tuner::DTypeName(d);
  }
}

TEST(OperandValues, AreAPureFunctionOfSeedAndIndex) {
  EXPECT_EQ(OperandValue(1, 123456789, 7), OperandValue(1, 123456789, 7));
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += OperandValue(1, i, 23) == OperandValue(2, i, 23);
  EXPECT_LT(same, 5) << "the seed does not change the values";
}

// The product of the generated operands, the slow way: whole matrices.
double BruteForce(const tuner::GemmShape& g, const OperandSource& s, const OutputIndex& at) {
  const int bits = MantissaBits(g.dtype);
  const auto value = [&](int64_t base, int64_t rows, int64_t cols, bool transposed, int64_t r,
                         int64_t c) {
    // Element (r, c) of the operand as used, stored [rows, cols] or its transpose.
    const int64_t index = transposed ? c * rows + r : r * cols + c;
    return static_cast<double>(OperandValue(s.seed, static_cast<uint64_t>(base + index), bits));
  };
  double sum = 0;
  for (int64_t k = 0; k < g.k; ++k) {
    sum += value(s.a_element + at.b * g.m * g.k, g.m, g.k, g.a_transposed, at.i, k) *
           value(s.b_element + at.b * g.k * g.n, g.k, g.n, g.b_transposed, k, at.j);
  }
  return sum;
}

TEST(ReferenceElement, MatchesTheWholeProductInEveryLayout) {
  for (const char* layout : {"NT", "NN", "TN", "TT"}) {
    tuner::GemmShape g;
    g.m = 7;
    g.n = 5;
    g.k = 33;
    g.batch = 3;
    ASSERT_TRUE(tuner::ParseLayout(layout, &g.a_transposed, &g.b_transposed));
    const OperandSource s{99, 1024, 4096};
    const auto picked = PickOutputElements(g);
    const auto refs = ReferenceElements(g, s, picked);
    ASSERT_EQ(refs.size(), picked.size());
    for (size_t i = 0; i < picked.size(); ++i) {
      // Summed in another order: equal to far below any tolerance.
      EXPECT_NEAR(refs[i].ref, BruteForce(g, s, picked[i]), 1e-12 * refs[i].magnitude) << layout;
      EXPECT_DOUBLE_EQ(refs[i].ref, ReferenceElement(g, s, picked[i]).ref);
      EXPECT_GE(refs[i].magnitude, std::abs(refs[i].ref));
    }
  }
}

TEST(PickOutputElements, AGridOfRowsAndColumnsWithBothCornersRepeatedPerShape) {
  tuner::GemmShape g;
  g.m = 100;
  g.n = 50;
  g.k = 10;
  g.batch = 2;
  const auto picked = PickOutputElements(g);
  ASSERT_EQ(picked.size(), 64u);
  EXPECT_EQ(picked.front().Offset(g), 0);
  EXPECT_EQ(picked.back().Offset(g), 2 * 100 * 50 - 1);
  std::set<std::pair<int64_t, int64_t>> rows;
  std::set<int64_t> cols;
  for (const OutputIndex& at : picked) {
    EXPECT_LT(at.b, 2);
    EXPECT_LT(at.i, 100);
    EXPECT_LT(at.j, 50);
    rows.insert({at.b, at.i});
    cols.insert(at.j);
  }
  EXPECT_LE(rows.size(), 8u) << "rows are shared by the grid";
  EXPECT_LE(cols.size(), 8u);
  EXPECT_TRUE(cols.contains(0) && cols.contains(49)) << "the edge columns";
  EXPECT_EQ(PickOutputElements(g)[40].Offset(g), picked[40].Offset(g));
}

TEST(Verify, CorrectOutputPassesAndAWrongOrNonFiniteOneFails) {
  std::vector<SampledElement> good = {{1.0, 1.001, 50}, {-3.0, -2.99, 80}};
  EXPECT_TRUE(VerifySamples(good, tuner::DType::kBf16).ok);
  // Cancellation: ref near 0 with large terms must not fail a correct answer.
  std::vector<SampledElement> cancel = {{0.02, 0.0, 200}};
  EXPECT_TRUE(VerifySamples(cancel, tuner::DType::kBf16).ok);
  std::vector<SampledElement> wrong = {{1.0, 1.0, 50}, {30.0, 3.0, 80}};
  const auto bad = VerifySamples(wrong, tuner::DType::kBf16);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.note.find("above the bf16 tolerance"), std::string::npos) << bad.note;
  std::vector<SampledElement> nan = {{NAN, 1.0, 1}};
  EXPECT_FALSE(VerifySamples(nan, tuner::DType::kFp32).ok);
  // The same error passes bf16 but fails fp32.
  std::vector<SampledElement> loose = {{1.01, 1.0, 10}};
  EXPECT_TRUE(VerifySamples(loose, tuner::DType::kBf16).ok);
  EXPECT_FALSE(VerifySamples(loose, tuner::DType::kFp32).ok);
}

}  // namespace
}  // namespace crest::measure
