// GEMMs as the tests write them, for any test binary (header only).
#pragma once

#include <cstdint>
#include <string_view>

#include "crest/tuner/gemm.h"
#include "gtest/gtest.h"

namespace crest::testing {

// An unnamed GEMM of these sizes: bf16 and a linear layer's forward layout
// ("NT") unless told, one batch unless told.
inline tuner::GemmShape Gemm(int64_t m, int64_t n, int64_t k,
                             tuner::DType dtype = tuner::DType::kBf16, int64_t batch = 1) {
  tuner::GemmShape g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.dtype = dtype;
  g.batch = batch;
  return g;
}

// The same in `layout` ("NT", "NN", "TN" or "TT"); another word fails the test.
inline tuner::GemmShape Gemm(int64_t m, int64_t n, int64_t k, tuner::DType dtype,
                             std::string_view layout, int64_t batch = 1) {
  tuner::GemmShape g = Gemm(m, n, k, dtype, batch);
  EXPECT_TRUE(tuner::ParseLayout(layout, &g.a_transposed, &g.b_transposed)) << layout;
  return g;
}

}  // namespace crest::testing
