// Internal to the crest CLI: what `crest shapes` reports, printed by the
// printers (printer.h) like the answers of results.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crest/tuner/attention_flops.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/model_config.h"

namespace crest::cli {

// `crest shapes`
struct ShapesReport {
  tuner::ModelConfig config;
  bool train = false;
  bool fused_attention = true;          // the attention core as one FlashAttention kernel
  std::vector<tuner::GemmShape> gemms;  // fused: without attn_score and attn_value
  // Fused: the core's FLOPs (causal; backward only with train), listed in
  // the table where its two GEMMs would be (before gemms[attention_at]).
  tuner::AttentionFlops attention;
  size_t attention_at = 0;
  double layer_flops = 0;   // one layer on one rank: its GEMMs and the fused core
  double logits_flops = 0;  // the logits GEMMs, once per model
  std::vector<std::string> warnings;
};

}  // namespace crest::cli
