// `crest gpus` and `crest shapes` as text, JSON and CSV.
#include "catalogue_reports.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/calibration_fit.h"
#include "json_views.h"
#include "outputs.h"
#include "shapes_report.h"

namespace crest::cli {
namespace {

std::string Peak(double tflops) { return tflops > 0 ? Fixed(tflops, 1) : "-"; }

// "calibrated bf16,fp16", "transferred bf16,fp16" or "spec-only".
std::string ModelColumn(const tuner::GpuSpec& gpu) {
  const tuner::CalibrationKinds kinds = tuner::CalibrationKindsOf(gpu);
  std::vector<std::string> parts;
  if (!kinds.calibrated.empty()) parts.push_back("calibrated " + StrJoin(kinds.calibrated, ","));
  if (!kinds.transferred.empty()) {
    parts.push_back("transferred " + StrJoin(kinds.transferred, ","));
  }
  return parts.empty() ? "spec-only" : StrJoin(parts, "; ");
}

// The bf16 fast-kernel expected error of the model in force, over its
// classes: "+/-2.7%" or "+/-1.4-5.2%".
std::string ErrorColumn(const tuner::GpuSpec& gpu) {
  const auto c = tuner::ActiveCalibration(gpu.name, tuner::DType::kBf16);
  const auto [low, high] =
      tuner::ErrorRange(c != nullptr ? c->params : gpu.model, /*fallback=*/false);
  return "+/-" + Fixed(100 * low, 1) + (low == high ? "" : "-" + Fixed(100 * high, 1)) + "%";
}

// The fused attention core's rows: batch b*a/t, M = N = s (the scores it
// never writes), K = d; layout "fused".
void AddAttentionRows(const ShapesReport& r, Table& table) {
  const tuner::ModelConfig& c = r.config;
  const std::string batch = std::to_string(c.micro_batch * (c.heads / c.tp));
  const std::string s = std::to_string(c.seq);
  const std::string d = std::to_string(c.HeadDim());
  table.AddRow({"attention.fwd", "fwd", batch, s, s, d, "fused", Fixed(r.attention.fwd / 1e9, 1)});
  if (r.train) {
    table.AddRow(
        {"attention.bwd", "bwd", batch, s, s, d, "fused", Fixed(r.attention.bwd / 1e9, 1)});
  }
}

Table ShapesTable(const ShapesReport& r) {
  using A = Table::Align;
  Table table({{"name", A::kLeft},
               {"pass", A::kLeft},
               {"batch"},
               {"M"},
               {"N"},
               {"K"},
               {"layout", A::kLeft},
               {"GFLOP"}});
  for (size_t i = 0; i < r.gemms.size(); ++i) {
    if (r.fused_attention && i == r.attention_at) AddAttentionRows(r, table);
    const tuner::GemmShape& g = r.gemms[i];
    table.AddRow({g.name, std::string(tuner::PassName(g.pass)), std::to_string(g.batch),
                  std::to_string(g.m), std::to_string(g.n), std::to_string(g.k), g.Layout(),
                  Fixed(g.Flops() / 1e9, 1)});
  }
  if (r.fused_attention && r.attention_at >= r.gemms.size()) AddAttentionRows(r, table);
  return table;
}

}  // namespace

Table Csv(const GpusReport& r) {
  using A = Table::Align;
  Table table({{"name", A::kLeft},
               {"arch", A::kLeft},
               {"cc", A::kLeft},
               {"SMs"},
               {"L2_MiB"},
               {"mem_GiB"},
               {"GB/s"},
               {"fp32"},
               {"tf32"},
               {"fp16"},
               {"bf16"},
               {"fp8"},
               {"align_B"},
               {"model", A::kLeft},
               {"bf16_error"},
               {"aliases", A::kLeft}});
  for (const tuner::GpuSpec* gpu : r.gpus) {
    const tuner::GpuSpec& g = *gpu;
    table.AddRow({std::string(g.name), std::string(g.architecture),
                  std::string(g.compute_capability), std::to_string(g.sm_count),
                  std::to_string(g.l2_bytes >> 20), Fixed(g.memory_gib, 0),
                  Fixed(g.memory_bandwidth_gbs, 0), Peak(g.peak_fp32), Peak(g.peak_tf32),
                  Peak(g.peak_fp16), Peak(g.peak_bf16), Peak(g.peak_fp8),
                  StrCat(g.min_alignment_bytes, "/", g.preferred_alignment_bytes), ModelColumn(g),
                  ErrorColumn(g), StrJoin(g.aliases, ",")});
  }
  return table;
}

void Text(const GpusReport& r, std::ostream& out) {
  Csv(r).Print(out);
  out << "\nPeaks are dense TFLOP/s from public datasheets (sources cited in "
         "tuner/src/gpu_catalogue.cc); '-' = no such path.\n"
         "align_B = minimum/preferred byte multiple of contiguous dimensions.\n"
         "model = the predictor for this GPU: calibrated from its own measurements for the "
         "dtypes named (crest calibrate); transferred: a sibling's calibration (the same "
         "architecture) moved to it by SMs and sustained clock; spec-only: the architecture's "
         "uncalibrated defaults on the datasheet's figures.\n"
         "bf16_error = the half-width of one bf16 GEMM's predicted interval (fast kernels, over "
         "their classes): the fit's "
      << Fixed(100 * tuner::kIntervalQuantile, 0)
      << "th percentile of errors on held-out d_ff windows, that plus the "
         "transfer's, or the defaults' assumed 25%.\n";
}

nlohmann::json Json(const GpusReport& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const tuner::GpuSpec* gpu : r.gpus) gpus.push_back(GpuJson(*gpu));
  return {{"gpus", gpus}};
}

Table Csv(const ShapesReport& r) { return ShapesTable(r); }

void Text(const ShapesReport& r, std::ostream& out) {
  const tuner::ModelConfig& c = r.config;
  out << "GEMMs per tensor-parallel rank (t=" << c.tp << "), h=" << c.hidden << " a=" << c.heads
      << " g=" << c.KvHeads() << " d=" << c.HeadDim() << " f=" << c.d_ff << " v=" << c.vocab
      << " s=" << c.seq << " b=" << c.micro_batch << ", " << tuner::DTypeName(c.dtype) << "\n\n";
  ShapesTable(r).Print(out);
  out << "\nper layer: " << Fixed(r.layer_flops / 1e9, 1)
      << " GFLOP; logits (once per model): " << Fixed(r.logits_flops / 1e9, 1) << " GFLOP\n";
  if (r.fused_attention) {
    out << "attention = the attention core as one fused FlashAttention kernel (causal: "
           "2*b*(a/t)*s^2*d FLOPs forward, the backward 2.5x that), not a GEMM: it never writes "
           "the s*s scores. --attention unfused lists its two batched GEMMs (attn_score, "
           "attn_value) at full s*s instead.\n";
  }
}

nlohmann::json Json(const ShapesReport& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& g : r.gemms) list.push_back(GemmJson(g));
  nlohmann::json attention = {{"kernel", r.fused_attention ? "fused" : "unfused"}};
  if (r.fused_attention) {
    attention["causal"] = true;
    attention["fwd_flops"] = r.attention.fwd;
    if (r.train) attention["bwd_flops"] = r.attention.bwd;
  }
  return {{"pass", r.train ? "train" : "fwd"},
          {"dtype", std::string(tuner::DTypeName(r.config.dtype))},
          {"tp", r.config.tp},
          {"gemms", list},
          {"attention", attention},
          {"layer_flops", r.layer_flops},
          {"logits_flops", r.logits_flops},
          {"warnings", r.warnings}};
}

}  // namespace crest::cli
