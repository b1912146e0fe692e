// Test support: d_ff queries as the answer and sweep tests write them
// (header only).
#pragma once

#include <cstdint>

#include "crest/tuner/dff_query.h"

namespace crest::testing {

// Every d_ff candidate within ±window of 8/3·hidden, unranked (top 0).
inline tuner::DffQuery EveryCandidate(int64_t hidden, int64_t window) {
  tuner::DffQuery q;
  q.dff.hidden = hidden;
  q.dff.window = window;
  q.top = 0;
  return q;
}

}  // namespace crest::testing
