// `crest shapes`: a model config → its GEMMs.
#include <memory>
#include <string>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/design.h"
#include "crest/tuner/shapes.h"
#include "json_views.h"
#include "table.h"

namespace crest::cli {
namespace {

struct ShapesFlags {
  ModelConfig config;
  std::string dtype{kDefaultDtype};
  std::string pass = "fwd";
  bool separate_gate_up = false;
};

absl::Status RunShapes(const ShapesFlags& f, Io& io) {
  ModelConfig config = f.config;
  auto dtype = ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  config.dtype = *dtype;
  ShapeOptions options;
  if (auto s = ParsePass(f.pass, &options.include_backward); !s.ok()) return s;
  options.fuse_gate_up = !f.separate_gate_up;
  auto gemms = TransformerGemms(config, options);
  if (!gemms.ok()) return gemms.status();

  const std::vector<std::string> warnings = HeadDimWarnings(config);
  for (const std::string& w : warnings) io.err << "warning: " << w << "\n";
  double layer_flops = 0;
  double logits_flops = 0;
  for (const auto& g : *gemms)
    (g.name.starts_with("logits.") ? logits_flops : layer_flops) += g.Flops();

  if (io.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& g : *gemms) list.push_back(GemmJson(g));
    io.out << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                             {"pass", f.pass},
                             {"dtype", std::string(DTypeName(config.dtype))},
                             {"tp", config.tp},
                             {"gemms", list},
                             {"layer_flops", layer_flops},
                             {"logits_flops", logits_flops},
                             {"warnings", warnings}}
                  .dump(2)
           << '\n';
    return absl::OkStatus();
  }
  if (!io.csv) io.out << "GEMMs per tensor-parallel rank (t=" << config.tp << "), h=" << config.hidden
         << " a=" << config.heads << " g=" << config.KvHeads() << " d=" << config.HeadDim()
         << " f=" << config.d_ff << " v=" << config.vocab << " s=" << config.seq
         << " b=" << config.micro_batch << ", " << DTypeName(config.dtype) << "\n\n";
  using A = Table::Align;
  Table table({{"name", A::kLeft},
               {"pass", A::kLeft},
               {"batch"},
               {"M"},
               {"N"},
               {"K"},
               {"layout", A::kLeft},
               {"GFLOP"}});
  for (const auto& g : *gemms) {
    table.AddRow({g.name, std::string(PassName(g.pass)), std::to_string(g.batch),
                  std::to_string(g.m), std::to_string(g.n), std::to_string(g.k), g.Layout(),
                  Fixed(g.Flops() / 1e9, 1)});
  }
  if (io.csv) {
    table.PrintCsv(io.out);
    return absl::OkStatus();
  }
  table.Print(io.out);
  io.out << "\nper layer: " << Fixed(layer_flops / 1e9, 1)
         << " GFLOP; logits (once per model): " << Fixed(logits_flops / 1e9, 1) << " GFLOP\n";
  return absl::OkStatus();
}

}  // namespace

Command RegisterShapes(CLI::App& root) {
  auto flags = std::make_shared<ShapesFlags>();
  Command cmd;
  cmd.app = root.add_subcommand("shapes", "List the GEMMs of a transformer layer per TP rank");
  CLI::App& app = *cmd.app;
  app.add_option("--hidden", flags->config.hidden, "hidden size h")->required();
  app.add_option("--heads", flags->config.heads, "attention heads a")->required();
  app.add_option("--kv-heads", flags->config.kv_heads, "key/value heads g (default: = heads)");
  app.add_option("--d-ff", flags->config.d_ff, "SwiGLU inner size f")->required();
  app.add_option("--vocab", flags->config.vocab, "vocabulary size v")->required();
  app.add_option("--seq", flags->config.seq, "sequence length s")->required();
  app.add_option("--batch", flags->config.micro_batch, "micro-batch b (sequences)")
      ->capture_default_str();
  app.add_option("--tp", flags->config.tp, "tensor-parallel degree t")->capture_default_str();
  app.add_option("--pass", flags->pass, kPassHelp)->capture_default_str();
  app.add_option("--dtype", flags->dtype, kDtypeHelp)->capture_default_str();
  app.add_flag("--separate-gate-up", flags->separate_gate_up,
               "SwiGLU gate and up as two GEMMs (default: one fused GEMM)");
  cmd.run = [flags](Io& io) { return RunShapes(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
