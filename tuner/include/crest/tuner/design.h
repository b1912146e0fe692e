// Whole-model design: a transformer configuration's training step on one
// GPU (its GEMMs, fused attention, memory-bound kernels, optimizer,
// recompute and communication), its memory per GPU, tokens/s per GPU, MFU
// and HFU; and the search for sensible configurations near a parameter
// budget. docs/design.md says what each part assumes and where each
// constant comes from.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crest/tuner/attention.h"
#include "crest/tuner/design_config.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/ratio.h"
#include "crest/tuner/tp_comm.h"
#include "crest/tuner/training_memory.h"
#include "crest/tuner/training_step.h"

namespace crest::tuner {

// One optimizer step on one GPU (grad_accum micro-batches), by what takes
// the time. Each part is a Timing that says its kind: the GEMMs as the
// answering source times them (measured or predicted), the rest predicted.
struct StepBreakdown {
  int64_t micro_batches = 1;
  Timing gemm;       // every layer's GEMMs and the logits', forward and backward
  Timing attention;  // the attention core, forward and backward
  Timing other;      // the memory-bound kernels (training_step.h)
  Timing recompute;  // the forward re-run in the backward (none: 0)
  Timing tp_comm;    // tensor parallelism's collectives, not overlapped (Megatron's default)
  Timing optimizer;  // AdamW on this GPU's shard
  Timing dp_comm;    // the data-parallel collectives compute does not hide
  double dp_comm_total_us = 0;  // all of them
  Timing total;                 // the sum: the step
  double no_overlap_us = 0;     // the step with every data-parallel collective exposed
};

struct DesignRow {
  DesignConfig config;
  // Not OK: the rule the config breaks; then only params, warnings and (when
  // it is memory) memory are filled.
  absl::Status rule;
  std::vector<std::string> warnings;
  DesignParams params;
  TrainingMemory memory;
  double fwd_flops_per_token = 0;    // executed in the forward pass, all ranks, per token
  double train_flops_per_token = 0;  // executed: forward + both gradients (causal attention)
  // The common definition MFU counts (Chowdhery et al. 2022, app. B; as
  // Megatron, llm-foundry and torchtitan): 6 per weight of every matrix
  // multiply (the input embedding table is a lookup) + 12·L·a·d·s for
  // attention (not halved for causal masking).
  double model_flops_per_token = 0;
  double hardware_flops_per_token = 0;  // executed, recompute included (HFU)
  Timing layer_fwd;  // one layer's GEMMs and attention core on one rank, one micro-batch
  Timing layer_train;
  // The attention core's forward: fused (attention.h, predicted) or its two
  // batched GEMMs (attn_score, attn_value) when unfused.
  Timing attention_core_fwd;
  std::string attention_basis;  // how it was timed, in words
  Timing logits_fwd;            // the logits GEMM, once per micro-batch
  Timing logits_train;
  // Tensor parallelism's communication for one layer's train step (tp_comm.h,
  // predicted; zero at t = 1) and how it was modelled.
  Timing comm_layer_train;
  std::string comm_basis;
  std::string dp_basis;  // data parallelism's, in words
  StepBreakdown step;
  Timing step_train;                   // = step.total: what ranks, with its kind and runs
  double tokens_per_step_per_gpu = 0;  // grad_accum·b·s / t
  double tokens_per_s_per_gpu = 0;
  double tokens_per_s_per_gpu_no_overlap = 0;  // every data-parallel collective exposed
  double model_flops_per_s_per_gpu = 0;        // model_flops_per_token × tokens/s per GPU
  double mfu_peak = 0;                         // model FLOP/s per GPU / the datasheet dense peak
  double hfu_peak = 0;                         // hardware FLOP/s per GPU / the same peak
  int tie_group = 0;                           // ranking.h
};

struct DesignOptions {
  bool fuse_gate_up = true;
  // Fused: the attention core's GEMMs (every pass) leave the layer's sums and
  // a fused kernel's predicted time takes their place.
  AttentionKernel attention = AttentionKernel::kFused;
  // The GPU the step runs on (required: attention, memory and communication
  // are modelled on it); answers::RankDesignsWith sets it.
  const GpuSpec* gpu = nullptr;
  double peak_tflops = 0;  // datasheet dense peak for the dtype
};

// Times every GEMM of the config (forward and train) in one call of
// `timer`, so that one run answers them all. A config that breaks a rule
// comes back with `rule` set, not as an error; the timer's errors pass
// through.
absl::StatusOr<DesignRow> EvaluateDesign(const DesignConfig& config, const DesignOptions& options,
                                         const GemmSetTimer& timer);

// What ranks configurations: tokens/s per GPU when every ranked row has the
// same parameter count; model FLOP/s per GPU when they differ, so that
// models of different sizes compare at equal work (the time to train a
// given model on a given token budget).
enum class DesignRankBy { kTokensPerS, kModelFlopsPerS };
DesignRankBy RankByOf(std::span<const DesignRow> rows);
std::string_view RankByName(
    DesignRankBy by);  // "tokens_per_s_per_gpu", "model_flops_per_s_per_gpu"

// Orders rows by the rule of ranking.h over RankByOf's figure (the step's
// interval scaled alike): the first kind of number present (measured,
// mixed, predicted) first, the other kinds after, those that break a rule
// last (in input order, tie group 0).
void RankDesigns(std::vector<DesignRow>& rows);

// The largest micro-batch (1..kMaxBatchSearched) at which `config` fits in
// `gpu`'s memory, its other dimensions as given; 0 when none does. (The
// search's own ceiling, below limits.h's kMaxMicroBatch.)
inline constexpr int64_t kMaxBatchSearched = 4096;
int64_t LargestFittingBatch(DesignConfig config, const GpuSpec& gpu, AttentionKernel attention);

// The d_ff values to try for a hidden size and ratio (for `crest design`:
// members of the d_ff answer's best tie group).
using DffChooser =
    std::function<absl::StatusOr<std::vector<int64_t>>(int64_t hidden, const Ratio& ratio)>;

struct DesignSearch {
  double params = 0;        // budget, total parameters
  double tolerance = 0.05;  // keep configs within ±tolerance·params
  // seq, micro_batch, tp, dtype and vocab (unpadded) of its model, and its
  // kinds, embeddings and layout, from here.
  DesignConfig base;
  // d_ff/h ratios tried for SwiGLU (8/3 as Llama, 3.5 as Mixtral and Llama 3,
  // 4 as GPT); a GELU MLP tries 4 alone.
  std::vector<Ratio> ratios = {{8, 3, "8/3"}, {7, 2, "7/2"}, {4, 1, "4"}};
  // Empty: ratio·h rounded up to a multiple of 256 (as Llama 2 chose 11008).
  DffChooser choose_dff;
};

// Sensible configurations near a parameter budget: h a multiple of 128, every
// layer count with 64 ≤ h/layers ≤ 192 (as published models) that lands the
// total within the tolerance, head dim 64, 128 or 256, kv heads = heads or 8
// (GQA) where they divide, each ratio's d_ff values, vocab padded up to a
// multiple of 128·tp. InvalidArgument names the field (params, tolerance),
// also when the search finds more than kMaxDesignConfigs (limits.h).
absl::StatusOr<std::vector<DesignConfig>> SearchDesigns(const DesignSearch& search);

}  // namespace crest::tuner
