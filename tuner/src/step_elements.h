// Internal: the element counts of one micro-batch on one GPU that the step's
// memory-bound kernels (training_step.cc) and its memory (training_memory.cc)
// are both counted from, so the two models read one set of sizes.
#pragma once

#include "crest/tuner/design_config.h"
#include "crest/tuner/dtype.h"

namespace crest::tuner::internal {

struct StepElements {
  double tokens = 0;    // T = b·s, on the tensor-parallel group
  double hidden = 0;    // T·h/t (sequence parallel when t > 1)
  double ff = 0;        // T·f/t, one MLP intermediate
  double qk = 0;        // T·(a+g)·d/t, the rotated q and k
  double logits = 0;    // T·v/t
  double heads = 0;     // a/t
  double kv_heads = 0;  // g/t
  double head_dim = 0;  // d
  double bytes = 2;     // of one activation element (16-bit, fp8 training too)
};

inline StepElements CountElements(const DesignConfig& c) {
  const ModelConfig& m = c.model;
  const double t = static_cast<double>(m.tp);
  StepElements e;
  e.tokens = static_cast<double>(m.Tokens());
  e.hidden = e.tokens * static_cast<double>(m.hidden) / t;
  e.ff = e.tokens * static_cast<double>(m.d_ff) / t;
  e.heads = static_cast<double>(m.heads) / t;
  e.kv_heads = static_cast<double>(m.KvHeads()) / t;
  e.head_dim = static_cast<double>(m.HeadDim());
  e.qk = e.tokens * (e.heads + e.kv_heads) * e.head_dim;
  e.logits = e.tokens * static_cast<double>(m.vocab) / t;
  e.bytes = ElementBytes(OutputDType(m.dtype));
  return e;
}

}  // namespace crest::tuner::internal
