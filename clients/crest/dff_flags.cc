#include "dff_flags.h"

#include "cli.h"
#include "crest/common/str_cat.h"
#include "nlohmann/json.hpp"

namespace crest::cli {

void AddDffFlags(CLI::App& app, DffFlags& f, bool required) {
  AddOption(app, "--hidden", f.hidden, "hidden size h").Required(required);
  AddOption(app, "--ratio", f.ratio, "d_ff ratio r: a fraction (8/3) or a decimal (2.6667)")
      .ShowDefault();
  AddOption(app, "--window", f.window, "candidates within +/- this of the baseline floor(r*h)")
      .ShowDefault();
  AddOption(app, "--align", f.align, "keep only multiples of this (1 = every integer)")
      .ShowDefault();
  AddOption(app, "--tokens", f.tokens, "M of every MLP GEMM: tokens per rank (b*s)").ShowDefault();
  AddOption(app, "--tp", f.tp, "tensor-parallel degree t").ShowDefault();
  AddOption(app, "--dtype", f.dtype, kDtypeHelp).ShowDefault();
  AddOption(app, "--pass", f.pass, kPassHelp).ShowDefault();
  AddFlag(app, "--separate-gate-up", f.separate_gate_up,
          "SwiGLU gate and up as two GEMMs (default: one fused GEMM)");
  AddOption(app, "--gpu", f.gpu, "catalogued GPU (see `crest gpus`)").Required(required);
}

std::string DffFlagsToSpecJson(const DffFlags& f) {
  nlohmann::json item = {{"hidden", f.hidden}, {"ratio", f.ratio},
                         {"window", f.window}, {"align", f.align},
                         {"tokens", f.tokens}, {"tp", f.tp},
                         {"pass", f.pass},     {"fuse_gate_up", !f.separate_gate_up},
                         {"dtype", f.dtype}};
  nlohmann::json spec = {{"version", 1}, {"dff", nlohmann::json::array({item})}};
  if (!f.gpu.empty()) spec["gpu"] = f.gpu;
  return spec.dump();
}

absl::StatusOr<tuner::DffQuery> ToDffQuery(const DffFlags& f, int top) {
  tuner::DffQuery q;
  auto ratio = tuner::ParseRatio(f.ratio);
  if (!ratio.ok()) return ratio.status();
  auto dtype = tuner::ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  if (auto s = ParsePass(f.pass, &q.train); !s.ok()) return s;
  q.dff.hidden = f.hidden;
  q.dff.ratio = *ratio;
  q.dff.window = f.window;
  q.dff.align = f.align;
  q.tokens = f.tokens;
  q.dff.tp = f.tp;
  q.dtype = *dtype;
  q.fuse_gate_up = !f.separate_gate_up;
  q.top = top;
  return q;
}

absl::Status ParsePass(const std::string& text, bool* train) {
  if (text == "fwd") {
    *train = false;
  } else if (text == "train") {
    *train = true;
  } else {
    return absl::InvalidArgumentError(StrCat("pass: '", text, "' is not fwd or train"));
  }
  return absl::OkStatus();
}

}  // namespace crest::cli
