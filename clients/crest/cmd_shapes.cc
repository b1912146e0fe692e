// `crest shapes`: a model config → its GEMMs.
#include <algorithm>
#include <memory>
#include <string>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/attention_flops.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/shapes.h"
#include "printer.h"
#include "shapes_report.h"

namespace crest::cli {
namespace {

struct ShapesFlags {
  tuner::ModelConfig config;
  std::string dtype{tuner::kDefaultDtype};
  std::string pass = "fwd";
  bool separate_gate_up = false;
  std::string attention = "fused";
};

absl::Status RunShapes(const ShapesFlags& f, Io& io) {
  tuner::ModelConfig config = f.config;
  auto dtype = tuner::ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  config.dtype = *dtype;
  tuner::ShapeOptions options;
  if (auto s = ParsePass(f.pass, &options.include_backward); !s.ok()) return s;
  options.fuse_gate_up = !f.separate_gate_up;
  auto gemms = tuner::TransformerGemms(config, options);
  if (!gemms.ok()) return gemms.status();

  ShapesReport report;
  report.config = config;
  report.train = options.include_backward;
  report.fused_attention = f.attention == "fused";
  report.warnings = tuner::HeadDimWarnings(config);
  for (const std::string& w : report.warnings) io.err << "warning: " << w << "\n";
  if (report.fused_attention) {
    const auto first = std::find_if(gemms->begin(), gemms->end(), tuner::IsAttentionCore);
    report.attention_at = static_cast<size_t>(first - gemms->begin());
    std::erase_if(*gemms, tuner::IsAttentionCore);
    report.attention = tuner::FusedAttentionFlops(config);
    if (!report.train) report.attention.bwd = 0;
    report.layer_flops = report.attention.fwd + report.attention.bwd;
  }
  for (const auto& g : *gemms) {
    (g.name.starts_with("logits.") ? report.logits_flops : report.layer_flops) += g.Flops();
  }
  report.gemms = *std::move(gemms);
  PrinterFor(io)->Print(report);
  return absl::OkStatus();
}

}  // namespace

Command RegisterShapes(CLI::App& root) {
  auto flags = std::make_shared<ShapesFlags>();
  Command cmd;
  cmd.app = AddCommand(root, "shapes", "List the GEMMs of a transformer layer per TP rank");
  CLI::App& app = *cmd.app;
  AddOption(app, "--hidden", flags->config.hidden, "hidden size h").Required();
  AddOption(app, "--heads", flags->config.heads, "attention heads a").Required();
  AddOption(app, "--kv-heads", flags->config.kv_heads, "key/value heads g (default: = heads)");
  AddOption(app, "--d-ff", flags->config.d_ff, "SwiGLU inner size f").Required();
  AddOption(app, "--vocab", flags->config.vocab, "vocabulary size v").Required();
  AddOption(app, "--seq", flags->config.seq, "sequence length s").Required();
  AddOption(app, "--batch", flags->config.micro_batch, "micro-batch b (sequences)").ShowDefault();
  AddOption(app, "--tp", flags->config.tp, "tensor-parallel degree t").ShowDefault();
  AddOption(app, "--pass", flags->pass, kPassHelp).ShowDefault();
  AddOption(app, "--dtype", flags->dtype, kDtypeHelp).ShowDefault();
  AddFlag(app, "--separate-gate-up", flags->separate_gate_up,
          "SwiGLU gate and up as two GEMMs (default: one fused GEMM)");
  AddOption(app, "--attention", flags->attention,
            "the attention core: fused (one causal FlashAttention kernel, not a GEMM; its "
            "FLOPs in the table and totals) or unfused (its two batched GEMMs attn_score and "
            "attn_value, full s*s)")
      .OneOf({"fused", "unfused"})
      .ShowDefault();
  cmd.run = [flags](Io& io) { return RunShapes(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
