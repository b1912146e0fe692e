// Test support: sweep specs and d_ff queries as the sweep and answer tests
// write them.
#pragma once

#include <string>

#include "crest/sweep/spec.h"
#include "crest/tuner/dff_ranking.h"
#include "gtest/gtest.h"

namespace crest::testing {

// The spec of `json`; a spec that does not parse fails the test.
inline sweep::SweepSpec Spec(const std::string& json) {
  auto spec = sweep::ParseSweepSpec(json);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *std::move(spec) : sweep::SweepSpec{};
}

// Every d_ff candidate within ±window of 8/3·hidden, unranked (top 0).
inline DffQuery EveryCandidate(int64_t hidden, int64_t window) {
  DffQuery q;
  q.dff.hidden = hidden;
  q.dff.window = window;
  q.top = 0;
  return q;
}

}  // namespace crest::testing
