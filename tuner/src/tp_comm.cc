#include "crest/tuner/tp_comm.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/timing_ops.h"
#include "text.h"

namespace crest::tuner {

double RingCollectiveUs(double bytes, double ranks, double link_gbs, double latency_us) {
  if (ranks <= 1) return 0;
  return (ranks - 1) / ranks * bytes / (link_gbs * kLinkEfficiency * 1e3) +
         (ranks - 1) * latency_us;
}

absl::StatusOr<TpComm> PredictTpComm(const ModelConfig& c, const GpuSpec& gpu) {
  if (auto s = ValidateModelConfig(c); !s.ok()) return s;
  TpComm out;
  const std::string version(kTpCommModelVersion);
  if (c.tp == 1) {
    out.layer_fwd = PredictedTiming(0, 0, version);
    out.layer_train = out.layer_fwd;
    out.basis = "no tensor parallelism: no communication";
    return out;
  }
  if (gpu.link_gbs <= 0) {
    return absl::FailedPreconditionError(
        StrCat(gpu.name, " has no GPU-to-GPU link in the catalogue"));
  }
  const double t = static_cast<double>(c.tp);
  const bool nvlink = gpu.link.starts_with("NVLink");
  const double latency_us = nvlink ? kNvlinkLatencyUs : kPcieLatencyUs;
  out.bytes_per_allreduce = static_cast<double>(c.Tokens()) * static_cast<double>(c.hidden) *
                            ElementBytes(OutputDType(c.dtype));
  out.allreduce_us = 2 * RingCollectiveUs(out.bytes_per_allreduce, t, gpu.link_gbs, latency_us);
  out.layer_fwd = PredictedTiming(2 * out.allreduce_us, kTpCommError, version);
  out.layer_train = PredictedTiming(4 * out.allreduce_us, kTpCommError, version);
  out.basis =
      StrCat("ring all-reduce over ", c.tp, " GPUs on ", gpu.link, " (", Decimals(gpu.link_gbs, 0),
             " GB/s a direction x ", Decimals(kLinkEfficiency, 1), ", ", Decimals(latency_us, 0),
             " us a step; assumed): ", Decimals(out.allreduce_us, 1), " us per all-reduce of ",
             Decimals(out.bytes_per_allreduce / 1e6, 1), " MB, 2 a layer forward, 4 a train step");
  return out;
}

}  // namespace crest::tuner
