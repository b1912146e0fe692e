#include "crest/tuner/training_step.h"

#include <algorithm>

#include "crest/common/str_cat.h"
#include "crest/tuner/timing_ops.h"
#include "crest/tuner/tp_comm.h"
#include "step_elements.h"

namespace crest::tuner {

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

GemmCeiling ContinuousLoadCeiling(const GpuSpec& gpu, DType dtype) {
  const bool sixteen_bit = dtype == DType::kBf16 || dtype == DType::kFp16;
  if (!sixteen_bit || gpu.architecture != "Hopper" || gpu.power_w != 700) return {};
  return {kHopperContinuousLoadTflops,
          gpu.name == "H100-SXM"
              ? "measured on an H100 SXM under continuous load (643-668 TFLOP/s)"
              : "measured on an H100 SXM under continuous load (643-668 TFLOP/s), assumed for "
                "this Hopper part of the same 700 W"};
}

Timing HeldToCeiling(Timing t, double flops, const GemmCeiling& ceiling) {
  if (t.source != Source::kPredicted || ceiling.tflops <= 0 || t.time_us <= 0) return t;
  const double floor_us = flops / (ceiling.tflops * 1e6);
  if (t.time_us >= floor_us) return t;
  const double w = floor_us / t.time_us;
  t.time_us = floor_us;
  t.low_us *= w;
  t.high_us *= w;
  return t;
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

namespace {

// DpComm's basis in words: the stage, the dtypes, the rings and the step's total.
std::string DpBasis(const DesignConfig& c, const GpuSpec& gpu, const std::string& what,
                    bool one_node, double inter, double latency, const DpComm& out) {
  const TrainingLayout& l = c.layout;
  return StrCat("ZeRO ", l.zero, " over dp=", l.dp, ": ", what, " (gradients in ",
                GradReduceName(l.grad_reduce_bytes), ", weights in bf16); rings ",
                one_node
                    ? StrCat("within a node on ", gpu.link)
                    : StrCat("across nodes, one ring per NIC rail: ", l.gpus_per_node,
                             " GPUs a node x ", Decimals(inter, 1), " GB/s a GPU between nodes",
                             l.inter_node_gbs > 0 ? " (given)" : " (DGX reference design)"),
                " (", Decimals(out.link_gbs, 0), " GB/s x ", Decimals(kLinkEfficiency, 1), ", ",
                Decimals(latency, 0), " us a step; assumed), ", Decimals(out.total_us / 1e3, 2),
                " ms a step");
}

}  // namespace

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
  // Across nodes NCCL runs one ring per NIC rail, so what enters a node is
  // limited by all its NICs together (gpus_per_node of them, one a GPU),
  // shared by the node's tp data-parallel groups; within it, by the GPU's link.
  out.link_gbs = gpu.link_gbs;
  if (!one_node) {
    const double node_share =
        static_cast<double>(l.gpus_per_node) * inter / static_cast<double>(c.model.tp);
    out.link_gbs = gpu.link_gbs > 0 ? std::min(gpu.link_gbs, node_share) : node_share;
  }
  const bool nvlink = one_node && gpu.link.starts_with("NVLink");
  const double latency =
      one_node ? (nvlink ? kNvlinkLatencyUs : kPcieLatencyUs) : kInterNodeLatencyUs;
  // One layer's and the rest's weights (16-bit) and gradients (the layout's
  // width) on one TP rank: one ring each.
  const double t = static_cast<double>(c.model.tp);
  const double layer_params = static_cast<double>(p.per_layer) / t;
  const double rest_params =
      static_cast<double>(p.per_rank) - static_cast<double>(c.layers) * layer_params;
  const double grad_bytes = l.grad_reduce_bytes;
  const auto ring = [&](double bytes) { return RingCollectiveUs(bytes, n, out.link_gbs, latency); };
  const double layer_w = ring(2 * layer_params);
  const double layer_g = ring(grad_bytes * layer_params);
  const double rest_w = ring(2 * rest_params);
  const double rest_g = ring(grad_bytes * rest_params);
  const int64_t accum = l.grad_accum;
  const double layers = static_cast<double>(c.layers);
  std::string what;
  switch (l.zero) {
    case 0:  // all-reduce = reduce-scatter + all-gather
      out.layer_bwd_us = 2 * layer_g;
      out.bwd_micro_batches = 1;
      out.rest_us = 2 * rest_g;
      what = "gradients all-reduced once a step";
      break;
    case 1:
    case 2:
      out.layer_bwd_us = layer_g;
      out.bwd_micro_batches = l.zero == 1 ? 1 : accum;
      out.layer_fwd_us = layer_w;
      out.fwd_micro_batches = 1;
      out.rest_us = rest_g + rest_w;
      what = l.zero == 1
                 ? "gradients reduce-scattered once a step, weights all-gathered once"
                 : "gradients reduce-scattered every micro-batch, weights all-gathered once";
      break;
    default:
      out.layer_fwd_us = layer_w;
      out.fwd_micro_batches = accum;
      out.layer_bwd_us = layer_w + layer_g;
      out.bwd_micro_batches = accum;
      out.rest_us = static_cast<double>(accum) * (2 * rest_w + rest_g);
      what =
          "weights all-gathered in every forward and backward, gradients reduce-scattered "
          "in every backward (FSDP)";
      break;
  }
  out.total_us = layers * (out.layer_fwd_us * static_cast<double>(out.fwd_micro_batches) +
                           out.layer_bwd_us * static_cast<double>(out.bwd_micro_batches)) +
                 out.rest_us;
  out.basis = DpBasis(c, gpu, what, one_node, inter, latency, out);
  return out;
}

double CollectiveShare(const GpuSpec& gpu) {
  if (gpu.sm_count <= 0) return 0;
  return std::min(1.0, static_cast<double>(kCollectiveSms) / static_cast<double>(gpu.sm_count));
}

double ExposedComm(double comm_us, double compute_us, int64_t layers, double share) {
  if (layers < 1 || comm_us <= 0) return 0;
  const double each = std::max(comm_us - compute_us, comm_us * share);
  return comm_us + static_cast<double>(layers - 1) * std::max(0.0, each);
}

}  // namespace crest::tuner
