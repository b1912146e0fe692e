// The FLOPs of the attention core (softmax(Q·Kᵀ)·V) as a fused kernel does
// them, apart from its predicted times (attention.h) so that what only
// counts FLOPs (crest shapes) does not depend on the times' types.
#pragma once

#include "crest/tuner/model_config.h"

namespace crest::tuner {

// The FLOPs of one layer's fused causal attention core on one tensor-
// parallel rank, one micro-batch: forward 2·b·(a/t)·s²·d, backward 2.5×.
// REQUIRES: a valid config (ValidateModelConfig).
struct AttentionFlops {
  double fwd = 0;
  double bwd = 0;
};
AttentionFlops FusedAttentionFlops(const ModelConfig& config);

}  // namespace crest::tuner
