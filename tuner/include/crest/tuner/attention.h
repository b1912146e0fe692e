// The attention core (softmax(Q·Kᵀ)·V) as training runs it: one fused
// kernel (FlashAttention) that never writes the s×s scores, predicted from
// published throughput figures, not from its FLOPs as two GEMMs.
//
// Figures: Shah et al., "FlashAttention-3: Fast and Accurate Attention with
// Asynchrony and Low-precision" (2024), Fig. 5, forward pass, BF16, H100 80GB
// SXM5, causal, at head dims 64, 128, 256 and sequence lengths 512 to 16k:
// FlashAttention-3 for Hopper, FlashAttention-2 (the same figure) for every
// other architecture. Between the figure's points throughput is interpolated
// in log2 of sequence length and head dim, and held at the ends.
//
// On another GPU the figure is scaled by the ratio of the predictor's
// fast-kernel rate there to that of the GPU it was measured on (the same
// dtype). For Ampere parts that GPU is the A100 SXM, for which
// FlashAttention-2 was written: the H100 figure times FlashAttention-2's best
// on an A100 over its best on an H100, both from its paper (Dao 2023: up to
// 73% of the A100's 312 TFLOP/s, and up to 335 TFLOP/s running the same code
// on an H100). Other architectures scale from the H100 SXM.
//
// kFusedTriton is the 2022 Triton FlashAttention (flash-attention's
// flash_attn_triton.py, Triton 2.0.0.dev20221202; llm-foundry's
// attn_impl: triton): half FlashAttention-2's throughput on the same GPU.
// Its own header says its forward and backward together are slightly slower
// than FlashAttention's CUDA kernel, and FlashAttention-2's paper puts
// FlashAttention-2 at about 2x that kernel. Like FlashAttention-2 it is
// written for Ampere and uses none of Hopper's features.
//
// Causal attention does half the FLOPs of full attention: forward 2·b·a·s²·d
// per rank (the figure's own count), and the backward pass 2.5× that
// (FlashAttention-2's count) at the forward's throughput — an assumption:
// the figure has no backward.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/tuner/attention_flops.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/timing.h"

namespace crest::tuner {

enum class AttentionKernel {
  kFused,        // FlashAttention, predicted from published figures (the default):
                 // FlashAttention-3 on Hopper, -2 elsewhere
  kUnfused,      // attn_score and attn_value as two batched GEMMs writing the scores
  kFusedFa2,     // FlashAttention-2 on every GPU (what Hopper runs before FA3, 2023-24)
  kFusedTriton,  // the 2022 Triton FlashAttention on every GPU: half FlashAttention-2
};
inline bool IsFused(AttentionKernel k) { return k != AttentionKernel::kUnfused; }
// "fused", "unfused", "fused-fa2", "fused-triton"
std::string_view AttentionKernelName(AttentionKernel k);
std::optional<AttentionKernel> ParseAttentionKernel(std::string_view text);  // nullopt: unknown

inline constexpr std::string_view kAttentionModelVersion = "flash-attn-fig5-2";
// What one predicted fused attention time misses by: figures of one GPU,
// interpolated and scaled to others.
inline constexpr double kFusedAttentionError = 0.15;
// What the 2022 Triton kernel's halving adds to that: its sources ("slightly
// slower", "about 2x") allow roughly 0.45-0.55 of FlashAttention-2.
inline constexpr double kTritonHalvingError = 0.10;
// The expected error of `kernel`'s predicted time (unfused: none here; its
// GEMMs carry the GEMM predictor's).
double AttentionKernelError(AttentionKernel kernel);
// A fused `kernel`'s figures in words, for an answer's note: which kernel,
// where its figures come from, the factors and their sources, the backward's
// assumption and the expected error ("FlashAttention…, expected error
// +/-15%"). REQUIRES: IsFused(kernel).
std::string AttentionFiguresNote(AttentionKernel kernel);

struct FusedAttention {
  double fwd_flops = 0;  // per rank, one micro-batch
  double bwd_flops = 0;
  double tflops = 0;  // the throughput used
  Timing fwd;         // predicted
  Timing bwd;
  std::string basis;  // in words: kernel, head dim, sequence, scale
};

// FLOPs and predicted times of one layer's attention core on one
// tensor-parallel rank. InvalidArgument for a config that breaks a rule.
// `kernel` kFusedFa2 takes FlashAttention-2's figures on Hopper too, and
// kFusedTriton half of them on every GPU.
absl::StatusOr<FusedAttention> PredictFusedAttention(
    const ModelConfig& config, const GpuSpec& gpu,
    AttentionKernel kernel = AttentionKernel::kFused);

}  // namespace crest::tuner
