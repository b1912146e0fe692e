// Whole-model design: a transformer configuration's parameters, FLOPs and
// time per layer from every GEMM it runs, tokens/s per GPU and MFU; and the
// search for sensible configurations near a parameter budget.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crest/tuner/attention.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/tp_comm.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/ratio.h"

namespace crest {

struct DesignConfig {
  ModelConfig model;
  int64_t layers = 0;
  bool tied_embeddings = false;  // the output layer reuses the embedding table
};

// Parameters of one configuration (weights only; RMSNorm gains included).
struct DesignParams {
  int64_t per_layer = 0;   // attention h·(a+2g)·d + a·d·h, MLP 3·h·f, two norms 2·h
  int64_t embedding = 0;   // v·h, and v·h again for an untied output layer
  int64_t total = 0;       // layers·per_layer + embedding + the final norm h
  int64_t per_rank = 0;    // what one tensor-parallel rank holds (norms replicated)
};
DesignParams CountParams(const DesignConfig& config);

// Head dims fused attention kernels and tensor cores handle badly: not a
// multiple of 8, above 256, below 32. Empty when the config is fine.
std::vector<std::string> HeadDimWarnings(const ModelConfig& config);

struct DesignRow {
  DesignConfig config;
  absl::Status rule;  // not OK: the rule the config breaks; nothing below is filled
  std::vector<std::string> warnings;
  DesignParams params;
  double fwd_flops_per_token = 0;   // model FLOPs of the forward pass, all ranks, per token
  double train_flops_per_token = 0;  // forward + both gradients
  Timing layer_fwd;      // one layer's GEMMs on one rank
  Timing layer_train;
  // The attention core's forward: fused (attention.h, predicted) or its two
  // batched GEMMs (attn_score, attn_value) when unfused.
  Timing attention_core_fwd;
  std::string attention_basis;  // how it was timed, in words
  Timing logits_fwd;     // the logits GEMM, once per model
  Timing logits_train;
  // Tensor parallelism's communication for one layer's train step (tp_comm.h,
  // predicted; zero at t = 1) and how it was modelled.
  Timing comm_layer_train;
  std::string comm_basis;
  // layers·(layer_train + comm_layer_train) + logits_train: one micro-batch
  // on one rank, communication not overlapped with compute.
  Timing step_train;
  double layer_train_amortized_us = 0;  // layer_train + logits_train / layers
  double tokens_per_s_per_gpu = 0;  // b·s / step_train / t
  // The same with communication hidden behind compute: the step is the
  // longer of the two.
  double tokens_per_s_per_gpu_overlapped = 0;
  double mfu_sustained = 0;  // model FLOP/s per GPU / the GPU's sustained dense rate
  double mfu_peak = 0;       // … / the datasheet dense peak (boost clock)
  int tie_group = 0;         // ranking.h
};

struct DesignOptions {
  bool fuse_gate_up = true;
  // Fused: the attention core's GEMMs (every pass) leave the layer's sums and
  // a fused kernel's predicted time takes their place. Needs `gpu`, as does
  // tensor parallelism's communication (t > 1); answers::RankDesignsWith
  // sets it from the GPU it answers for.
  AttentionKernel attention = AttentionKernel::kFused;
  const GpuSpec* gpu = nullptr;
  double sustained_tflops = 0;  // the GPU's sustained dense rate for the dtype
  double peak_tflops = 0;       // datasheet dense peak for the dtype
};

// Times every GEMM of the config (forward and train) in one call of
// `timer`, so that one run answers them all. A config that breaks a rule
// comes back with `rule` set, not as an error; the timer's errors pass
// through.
absl::StatusOr<DesignRow> EvaluateDesign(const DesignConfig& config, const DesignOptions& options,
                                         const GemmSetTimer& timer);

// Orders rows by the rule of ranking.h over tokens/s per GPU (the train
// step's time and interval per token per GPU): the first kind of number
// present (measured, mixed, predicted) first, the other kinds after, those
// that break a rule last (in input order, tie group 0).
void RankDesigns(std::vector<DesignRow>& rows);

// The d_ff values to try for a hidden size and ratio (for `crest design`:
// members of the d_ff answer's best tie group).
using DffChooser =
    std::function<absl::StatusOr<std::vector<int64_t>>(int64_t hidden, const Ratio& ratio)>;

struct DesignSearch {
  double params = 0;        // budget, total parameters
  double tolerance = 0.05;  // keep configs within ±tolerance·params
  ModelConfig base;         // seq, micro_batch, tp, dtype and vocab (unpadded) from here
  bool tied_embeddings = false;
  // d_ff/h ratios tried (8/3 as Llama, 3.5 as Mixtral and Llama 3, 4 as GPT).
  std::vector<Ratio> ratios = {{8, 3}, {7, 2}, {4, 1}};
  // Empty: ratio·h rounded up to a multiple of 256 (as Llama 2 chose 11008).
  DffChooser choose_dff;
};

// Sensible configurations near a parameter budget: h a multiple of 128, every
// layer count with 64 ≤ h/layers ≤ 192 (as published models) that lands the
// total within the tolerance, head dim 64, 128 or 256, kv heads = heads or 8
// (GQA) where they divide, each ratio's d_ff values, vocab padded up to a
// multiple of 128·tp. InvalidArgument names the field (params, tolerance).
absl::StatusOr<std::vector<DesignConfig>> SearchDesigns(const DesignSearch& search);

}  // namespace crest
