// Test support: the costly QueryDff of issue 40's audit, shaped by window —
// the train step with gate and up apart (9 GEMMs a candidate), answered by
// the node's database and model. hostile_clients_test and
// crestd_hostile_bench send it.
#pragma once

#include <cstdint>

#include "crest/v1/crest.pb.h"

namespace crest::testing {

inline v1::QueryDffRequest CostlyDffQuery(int64_t window) {
  v1::QueryDffRequest q;
  q.set_gpu("h100");
  q.set_hidden(4096);
  q.set_window(window);
  q.set_pass(v1::PASS_TRAIN);
  q.set_separate_gate_up(true);
  return q;
}

}  // namespace crest::testing
