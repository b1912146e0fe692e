// Memory per GPU of one configuration's training, PREDICTED by
// kStepModelVersion (docs/design.md, "Memory"):
//  - model states, 16 bytes a parameter in mixed-precision Adam (Rajbhandari
//    et al. 2020): 16-bit weights (2) and gradients (2), fp32 master weights
//    and two moments (12); the tensor-parallel rank's share, and over dp the
//    optimizer states from ZeRO 1, the gradients from 2, the weights from 3
//    (which then holds two layers gathered: the one running and the next);
//  - activations a layer keeps for its backward, one micro-batch, as
//    Korthikanti et al. (2022) count them (34·s·b·h bytes a GPT layer with
//    dropout, + 5·a·s²·b unfused), generalised to SwiGLU, GQA, rotary and
//    fused attention (which keeps no s×s scores: its output and a
//    log-sum-exp per row), divided by t under sequence parallelism;
//    selective recompute drops the attention core's own, full recompute
//    keeps each layer's input and one layer's whole set;
//  - the logits and their fp32 probabilities for the loss;
//  - a reserve: kContextReserveGiB for the CUDA context and the libraries'
//    workspaces, and kFragmentation of the rest for the caching allocator.
#pragma once

#include <string>

#include "crest/tuner/attention.h"
#include "crest/tuner/design_config.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::tuner {

// Assumed, not fitted: a CUDA context with cuBLAS, cuDNN and NCCL loaded
// holds about 1 GiB on Hopper (PyTorch's memory notes put the context alone
// at 0.3-1 GiB), and PyTorch's caching allocator leaves a few percent of
// what it holds unused.
inline constexpr double kContextReserveGiB = 1.0;
inline constexpr double kFragmentation = 0.05;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline double Gib(double bytes) { return bytes / kGiB; }

struct TrainingMemory {  // [bytes] on one GPU
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;    // fp32 master weights and two moments
  double activations = 0;  // every layer's, one micro-batch
  double logits = 0;
  double reserve = 0;
  double total = 0;
  double capacity = 0;  // the GPU's memory (catalogue)
  bool fits = false;    // total ≤ capacity
};

// Bytes one layer keeps for its backward: one micro-batch on one GPU.
double LayerActivationBytes(const DesignConfig& config, AttentionKernel attention, Recompute mode);

TrainingMemory PredictTrainingMemory(const DesignConfig& config, const DesignParams& params,
                                     const GpuSpec& gpu, AttentionKernel attention);

// "needs 81.2 GiB of H100-SXM's 80 GiB: weights 13.5, gradients …": a
// memory figure in words, for a rule a configuration breaks and for notes.
std::string DescribeMemory(const TrainingMemory& memory, const GpuSpec& gpu);

}  // namespace crest::tuner
