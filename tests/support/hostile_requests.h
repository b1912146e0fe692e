// Test support: requests of issue 40's audit, which hostile_clients_test
// and crestd_hostile_bench send.
#pragma once

#include <cstdint>
#include <string>

#include "crest/v1/crest.pb.h"

namespace crest::testing {

// The costly QueryDff, shaped by window: the train step with gate and up
// apart (9 GEMMs a candidate), answered by the node's database and model.
inline v1::QueryDffRequest CostlyDffQuery(int64_t window) {
  v1::QueryDffRequest q;
  q.set_gpu("h100");
  q.set_hidden(4096);
  q.set_window(window);
  q.set_pass(v1::PASS_TRAIN);
  q.set_separate_gate_up(true);
  return q;
}

// A spec of m 1..m_to × n 1..n_to GEMMs of depth k, each named with 256
// bytes (the longest name a spec may give): results that cost a reader
// ~300 bytes each.
inline std::string NamedGemmsSpec(int64_t m_to, int64_t n_to, int64_t k) {
  return R"({"gpu": "h100", "gemms": [{"name": ")" + std::string(256, 'g') +
         R"(", "m": {"from": 1, "to": )" + std::to_string(m_to) + R"(}, "n": {"from": 1, "to": )" +
         std::to_string(n_to) + R"(}, "k": )" + std::to_string(k) + "}]}";
}

}  // namespace crest::testing
