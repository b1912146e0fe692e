#include "crest/tuner/training_step.h"

#include <algorithm>

#include "crest/common/str_cat.h"
#include "crest/tuner/tp_comm.h"
#include "step_elements.h"

namespace crest {

using internal::CountElements;
using internal::StepElements;

KernelTraffic LayerKernelTraffic(const DesignConfig& c) {
  const StepElements e = CountElements(c);
  const double b = e.bytes;
  KernelTraffic k;
  // norm: read x, write y; backward reads x and dy, writes dx.
  k.fwd_bytes += 2 * (2 * b * e.hidden);
  k.bwd_bytes += 2 * (3 * b * e.hidden);
  k.fwd_kernels += 2;
  k.bwd_kernels += 2;
  // residual add: read two, write one; backward sums the two branches' gradients.
  k.fwd_bytes += 2 * (3 * b * e.hidden);
  k.bwd_bytes += 2 * (3 * b * e.hidden);
  k.fwd_kernels += 2;
  k.bwd_kernels += 2;
  if (c.mlp == MlpKind::kSwiGlu) {
    k.fwd_bytes += 3 * b * e.ff;  // read gate and up, write silu(gate)·up
    k.bwd_bytes += 5 * b * e.ff;  // read gate, up, dy; write dgate, dup
  } else {
    k.fwd_bytes += 2 * b * e.ff;  // read x, write gelu(x)
    k.bwd_bytes += 3 * b * e.ff;  // read x, dy; write dx
  }
  k.fwd_kernels += 1;
  k.bwd_kernels += 1;
  if (c.rotary) {
    k.fwd_bytes += 2 * b * e.qk;  // read and write q and k
    k.bwd_bytes += 2 * b * e.qk;
    k.fwd_kernels += 1;
    k.bwd_kernels += 1;
  }
  if (c.dropout) {
    // read x, write y and a one-byte mask; backward reads dy and the mask.
    k.fwd_bytes += 2 * (2 * b + 1) * e.hidden;
    k.bwd_bytes += 2 * (2 * b + 1) * e.hidden;
    k.fwd_kernels += 2;
    k.bwd_kernels += 2;
  }
  return k;
}

KernelTraffic HeadKernelTraffic(const DesignConfig& c) {
  const StepElements e = CountElements(c);
  const double b = e.bytes;
  KernelTraffic k;
  // Embedding: gather rows (read and write), backward scatter-adds them.
  k.fwd_bytes += 2 * b * e.hidden;
  k.bwd_bytes += 2 * b * e.hidden;
  // Final norm.
  k.fwd_bytes += 2 * b * e.hidden;
  k.bwd_bytes += 3 * b * e.hidden;
  // Cross-entropy: read the logits, keep fp32 probabilities; backward reads
  // them and writes the logits' gradient.
  k.fwd_bytes += (b + 4) * e.logits;
  k.bwd_bytes += (4 + b) * e.logits;
  k.fwd_kernels = 3;
  k.bwd_kernels = 3;
  return k;
}

Timing MemoryBoundTiming(double bytes, int kernels, const GpuSpec& gpu) {
  const double bytes_per_us = gpu.memory_bandwidth_gbs * gpu.model.memory_efficiency * 1e3;
  const double us = bytes / bytes_per_us + kernels * gpu.model.launch_us;
  return PredictedTiming(us, kStepPartError, std::string(kStepModelVersion));
}

Timing OptimizerTiming(const DesignConfig& c, const DesignParams& p, const GpuSpec& gpu) {
  const double shards = c.layout.zero >= 1 ? static_cast<double>(c.layout.dp) : 1;
  const double params = static_cast<double>(p.per_rank) / shards;
  return MemoryBoundTiming(params * kAdamBytesPerParam, 1, gpu);
}

double InterNodeGbs(const GpuSpec& gpu) {
  if (gpu.architecture == "Ampere") return 25;
  if (gpu.architecture == "Hopper" || gpu.architecture == "Blackwell") return 50;
  return 12.5;
}

absl::StatusOr<DpComm> PredictDpComm(const DesignConfig& c, const DesignParams& p,
                                     const GpuSpec& gpu) {
  if (auto s = ValidateLayout(c.layout, c.model.tp); !s.ok()) return s;
  const TrainingLayout& l = c.layout;
  DpComm out;
  if (l.dp == 1) {
    out.basis = "no data parallelism: no gradient or weight collectives";
    return out;
  }
  const double n = static_cast<double>(l.dp);
  const bool one_node = c.model.tp * l.dp <= l.gpus_per_node;
  const double inter = l.inter_node_gbs > 0 ? l.inter_node_gbs : InterNodeGbs(gpu);
  if (one_node && gpu.link_gbs <= 0) {
    return absl::FailedPreconditionError(
        StrCat(gpu.name, " has no GPU-to-GPU link in the catalogue"));
  }
  // Across nodes a ring runs at its slowest hop: the network, or the GPU's own link.
  out.link_gbs = gpu.link_gbs;
  if (!one_node) out.link_gbs = gpu.link_gbs > 0 ? std::min(gpu.link_gbs, inter) : inter;
  const bool nvlink = one_node && gpu.link.starts_with("NVLink");
  const double latency = one_node ? (nvlink ? kNvlinkLatencyUs : kPcieLatencyUs) : kInterNodeLatencyUs;
  // 16-bit weights and gradients of one layer and of the rest, on one TP rank.
  const double wbytes = 2;
  const double t = static_cast<double>(c.model.tp);
  const double layer_bytes = wbytes * static_cast<double>(p.per_layer) / t;
  const double rest_bytes =
      wbytes * (static_cast<double>(p.per_rank) - static_cast<double>(c.layers) * static_cast<double>(p.per_layer) / t);
  const double layer_one = RingCollectiveUs(layer_bytes, n, out.link_gbs, latency);
  const double rest_one = RingCollectiveUs(rest_bytes, n, out.link_gbs, latency);
  const int64_t accum = l.grad_accum;
  const double layers = static_cast<double>(c.layers);
  std::string what;
  switch (l.zero) {
    case 0:  // all-reduce = reduce-scatter + all-gather
      out.layer_bwd_us = 2 * layer_one;
      out.bwd_micro_batches = 1;
      out.rest_us = 2 * rest_one;
      what = "gradients all-reduced once a step";
      break;
    case 1:
    case 2:
      out.layer_bwd_us = layer_one;
      out.bwd_micro_batches = l.zero == 1 ? 1 : accum;
      out.layer_fwd_us = layer_one;
      out.fwd_micro_batches = 1;
      out.rest_us = 2 * rest_one;
      what = l.zero == 1 ? "gradients reduce-scattered once a step, weights all-gathered once"
                         : "gradients reduce-scattered every micro-batch, weights all-gathered once";
      break;
    default:
      out.layer_fwd_us = layer_one;
      out.fwd_micro_batches = accum;
      out.layer_bwd_us = 2 * layer_one;
      out.bwd_micro_batches = accum;
      out.rest_us = 3 * static_cast<double>(accum) * rest_one;
      what = "weights all-gathered in every forward and backward, gradients reduce-scattered "
             "in every backward (FSDP)";
      break;
  }
  out.total_us = layers * (out.layer_fwd_us * static_cast<double>(out.fwd_micro_batches) +
                           out.layer_bwd_us * static_cast<double>(out.bwd_micro_batches)) +
                 out.rest_us;
  out.basis = StrCat("ZeRO ", l.zero, " over dp=", l.dp, ": ", what, "; rings ",
                     one_node ? StrCat("within a node on ", gpu.link)
                              : StrCat("across nodes at ", Decimals(inter, 1),
                                       " GB/s a GPU between nodes",
                                       l.inter_node_gbs > 0 ? " (given)" : " (DGX reference design)"),
                     " (", Decimals(out.link_gbs, 0), " GB/s x ", Decimals(kLinkEfficiency, 1), ", ",
                     Decimals(latency, 0), " us a step; assumed), ",
                     Decimals(out.total_us / 1e3, 2), " ms a step");
  return out;
}

double ExposedComm(double comm_us, double compute_us, int64_t layers) {
  if (layers < 1 || comm_us <= 0) return 0;
  return comm_us + static_cast<double>(layers - 1) * std::max(0.0, comm_us - compute_us);
}

}  // namespace crest
