// Tensor parallelism's communication, predicted. Megatron-style TP runs two
// all-reduces of a layer's activations (b·s·h elements) in the forward pass
// (after attention's output projection and after the MLP's down projection)
// and two in the backward; with sequence parallelism each becomes an
// all-gather and a reduce-scatter, which move the same bytes. A ring
// all-reduce over t GPUs costs each GPU
//
//   2·(t−1)/t · bytes / (link bandwidth · kLinkEfficiency) + 2·(t−1) · latency
//
// with the link of the GPU's catalogue entry (NVLink generation, or PCIe) and
// its per-step latency (kNvlinkLatencyUs, kPcieLatencyUs). The efficiency and
// latencies are assumptions, labelled as such in every answer; the logits'
// small vocab-parallel reductions are left out.
#pragma once

#include "absl/status/statusor.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/timing.h"

namespace crest::tuner {

inline constexpr std::string_view kTpCommModelVersion = "ring-allreduce-1";
inline constexpr double kLinkEfficiency = 0.8;  // NCCL bus bandwidth / link bandwidth
inline constexpr double kNvlinkLatencyUs = 3.0;
inline constexpr double kPcieLatencyUs = 8.0;
inline constexpr double kTpCommError = 0.30;  // what such a prediction may miss by

struct TpComm {
  double bytes_per_allreduce = 0;  // one layer's activations
  double allreduce_us = 0;         // one all-reduce on one GPU
  Timing layer_fwd;                // two all-reduces (0 when t = 1)
  Timing layer_train;              // four
  std::string basis;               // in words
};

// One ring collective (an all-gather or a reduce-scatter; an all-reduce is
// two) over `ranks` GPUs, each holding `bytes`: (n−1)/n of them at
// link_gbs × kLinkEfficiency, in n−1 steps of latency_us [µs]. 0 for one rank.
double RingCollectiveUs(double bytes, double ranks, double link_gbs, double latency_us);

// One layer's TP communication on `gpu` for `config` (t = config.tp).
absl::StatusOr<TpComm> PredictTpComm(const ModelConfig& config, const GpuSpec& gpu);

}  // namespace crest::tuner
