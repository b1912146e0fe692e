// One optimizer step of training on one GPU, beyond its GEMMs and fused
// attention core (timed by the answering source and attention.h): the
// memory-bound kernels, the optimizer, and data parallelism's communication.
// Every time here is PREDICTED by kStepModelVersion from bytes moved, the
// catalogue's bandwidths and the stated efficiencies below; nothing is fitted
// to a published run (docs/design.md, "The training step").
//
// Assumed throughout: sequence parallelism whenever t > 1 (Korthikanti et al.
// 2022: norms, dropout and residuals run on s/t of the tokens, and the
// tensor-parallel all-reduces become all-gathers and reduce-scatters that
// move the same bytes), one fused kernel per elementwise operation, and
// activations in 16-bit (fp8 training keeps them so too).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/design_config.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/timing.h"

namespace crest::tuner {

inline constexpr std::string_view kStepModelVersion = "train-step-2";
// What one predicted part of a step may miss by: an assumption, as tp_comm.h's.
inline constexpr double kStepPartError = 0.30;
// AdamW in mixed precision (one fused multi-tensor kernel) per parameter:
// reads the 16-bit gradient (2 bytes), the fp32 master weight and both fp32
// moments (12), writes those three (12) and the 16-bit weight (2). Counted
// from the algorithm (Loshchilov & Hutter 2019; Micikevicius et al. 2018).
inline constexpr double kAdamBytesPerParam = 28;
// Latency of one step of a ring between nodes [µs] (assumed; NVLink's is
// tp_comm.h's kNvlinkLatencyUs).
inline constexpr double kInterNodeLatencyUs = 5.0;

// The rate large 16-bit GEMMs sustain under continuous load [TFLOP/s], where
// one has been measured: a training step runs its GEMMs back to back for
// minutes, power-capped. Measured on one H100 SXM at its 700 W limit
// (docs/measurement.md, "Why the method is what it is";
// tests/data/h100-2026-11-22): a bf16 GEMM of 8192×21888×4096 ran at 791
// TFLOP/s after idle and 643–668 after 2 s of back-to-back load; 655 is the
// midpoint. The GEMM predictor's H100 calibration was fitted to rows measured
// between idle gaps (partly at the boost clock) and predicts that GEMM at
// 738. Assumed for the other Hopper parts of the same 700 W board power.
inline constexpr double kHopperContinuousLoadTflops = 655;
struct GemmCeiling {
  double tflops = 0;        // 0: none known for this GPU and dtype
  std::string_view source;  // where the figure comes from, in words
};
GemmCeiling ContinuousLoadCeiling(const GpuSpec& gpu, DType dtype);

// A predicted GEMM time held to `ceiling`: no faster than `flops` at its
// rate, the interval scaled with the time. Measured and replayed times are
// returned as they are (they were timed on a GPU in its own state).
Timing HeldToCeiling(Timing time, double flops, const GemmCeiling& ceiling);

// The bytes one layer's memory-bound kernels read and write for one
// micro-batch on one GPU, and how many kernels that takes. Forward: two
// norms, rotary on q and k (if used), the MLP's activation (SwiGLU's
// silu(gate)·up, or GELU), two residual adds, and two dropouts (if used);
// backward: each one's gradient.
struct KernelTraffic {
  double fwd_bytes = 0;
  double bwd_bytes = 0;
  int fwd_kernels = 0;
  int bwd_kernels = 0;
};
KernelTraffic LayerKernelTraffic(const DesignConfig& config);
// Once per micro-batch: the embedding lookup, the final norm and the
// cross-entropy over the vocabulary (16-bit logits in, fp32 probabilities
// kept for the backward, as Megatron's vocab-parallel loss).
KernelTraffic HeadKernelTraffic(const DesignConfig& config);

// Memory-bound work on `gpu`: bytes / (HBM bandwidth × the catalogue's
// memory_efficiency) + kernels × the catalogue's launch_us, predicted.
Timing MemoryBoundTiming(double bytes, int kernels, const GpuSpec& gpu);

// The optimizer step on one GPU: kAdamBytesPerParam for each parameter it
// updates (its tensor-parallel share, divided over dp from ZeRO stage 1).
Timing OptimizerTiming(const DesignConfig& config, const DesignParams& params, const GpuSpec& gpu);

// Bandwidth between nodes per GPU and direction [GB/s] for `gpu`'s
// architecture, from the DGX reference designs (one NIC per GPU): Ampere
// 25 (DGX A100, 200 Gb/s HDR InfiniBand), Hopper and Blackwell 50 (DGX
// H100/H200/B200, 400 Gb/s NDR); others 12.5 (100 Gb/s, assumed).
double InterNodeGbs(const GpuSpec& gpu);

// Data parallelism's collectives in one optimizer step on one GPU, per
// ZeRO stage (rings over dp; NCCL bus bandwidth = link × kLinkEfficiency):
//   0: gradients all-reduced, once a step (during the last micro-batch's backward);
//   1: gradients reduce-scattered likewise, weights all-gathered once (beside
//      the first micro-batch's forward);
//   2: gradients reduce-scattered in every micro-batch's backward, weights
//      all-gathered once;
//   3: weights all-gathered in every forward and again in every backward,
//      gradients reduce-scattered in every backward (FSDP).
// Layers' collectives are bucketed by layer and can run beside the compute
// of the next layer (prefetch one layer ahead); the embeddings' and final
// norm's never hide.
struct DpComm {
  double layer_fwd_us = 0;        // one layer's collectives beside a forward that has them
  double layer_bwd_us = 0;        // … beside a backward that has them
  int64_t fwd_micro_batches = 0;  // micro-batches of a step whose forward has them
  int64_t bwd_micro_batches = 0;
  double rest_us = 0;   // the embeddings' and final norm's, once a step
  double total_us = 0;  // everything one step communicates
  double link_gbs = 0;  // the bandwidth the ring runs at, per direction
  std::string basis;    // in words, with the assumptions
};
absl::StatusOr<DpComm> PredictDpComm(const DesignConfig& config, const DesignParams& params,
                                     const GpuSpec& gpu);

// SMs a NCCL collective holds while it runs beside compute (one CTA an SM):
// 24, what an FSDP all-gather launched on an H100 beside a GEMM (Nsight
// Systems trace in "Compute-Communication Overlap Causes Severe GEMM
// Performance Degradation because of Tail Effect", NVIDIA developer forums,
// 2025); assumed for every GPU and collective. Compute beside it runs on the
// rest.
inline constexpr int kCollectiveSms = 24;
// The share of `gpu`'s SMs a collective takes from compute beside it.
double CollectiveShare(const GpuSpec& gpu);

// How much a step loses to `layers` layers' collectives of `comm_us` each
// when each runs beside the compute of the next layer (`compute_us` at the
// whole GPU's rate): the first layer's in full; for each other, what its
// compute cannot hide, or at least the compute it slows, comm × `share`
// (the SMs the collective holds, CollectiveShare) — whichever is more.
double ExposedComm(double comm_us, double compute_us, int64_t layers, double share);

}  // namespace crest::tuner
