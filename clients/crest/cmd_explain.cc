// `crest explain`: the predictor's breakdown of one GEMM (this build's
// model, or a crestd's with --server).
#include <memory>
#include <string>

#include "answer_flags.h"
#include "cli.h"
#include "gemm_flags.h"
#include "printer.h"
#include "results.h"

namespace crest::cli {
namespace {

struct ExplainFlags {
  GemmFlags gemm;
  std::string gpu;
};

absl::Status RunExplain(const ExplainFlags& f, Io& io) {
  auto gpu = tuner::FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto gemm = ToGemm(f.gemm);
  if (!gemm.ok()) return gemm.status();
  auto answers = OpenAnswers(AnswerFlags{});
  if (!answers.ok()) return answers.status();
  auto p = (*answers)->Predict(*gemm, **gpu);
  if (!p.ok()) return p.status();
  auto local = tuner::Predict(*gemm, **gpu);
  if (local.ok() && local->model_version != p->model_version) {
    io.err << "note: " << (*answers)->origin().description << " runs model " << p->model_version
           << "; this crest has " << local->model_version << "\n";
  }
  PrinterFor(io)->Print(ExplainResult{**gpu, *gemm, *std::move(p), (*answers)->origin()});
  return absl::OkStatus();
}

}  // namespace

Command RegisterExplain(CLI::App& root) {
  auto flags = std::make_shared<ExplainFlags>();
  Command cmd;
  cmd.app = AddCommand(root, "explain", "Predict one GEMM and show its tile/wave arithmetic");
  CLI::App& app = *cmd.app;
  AddGemmFlags(app, flags->gemm);
  AddOption(app, "--gpu", flags->gpu, "catalogued GPU (see `crest gpus`)").Required();
  cmd.run = [flags](Io& io) { return RunExplain(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
