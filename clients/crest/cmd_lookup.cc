// `crest lookup`: the best known result for one GEMM, from a database or a
// crestd (the model answering what they lack).
#include <memory>

#include "answer_flags.h"
#include "cli.h"
#include "crest/common/str_cat.h"
#include "gemm_flags.h"
#include "printer.h"
#include "remote_flags.h"
#include "results.h"

namespace crest::cli {
namespace {

struct LookupFlags {
  GemmFlags gemm;
  std::string gpu;
  AnswerFlags answer;
};

absl::Status RunLookup(const LookupFlags& f, Io& io) {
  auto gpu = tuner::FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto gemm = ToGemm(f.gemm);
  if (!gemm.ok()) return gemm.status();
  if (Remote().server.empty() && f.answer.db.empty()) {
    return absl::InvalidArgumentError("db: give --db FILE or --server HOST:PORT");
  }
  auto answers = OpenAnswers(f.answer);
  if (!answers.ok()) return answers.status();
  auto answer = (*answers)->Lookup(*gemm, **gpu);
  if (!answer.ok()) return answer.status();
  if (!answer->measured && !answer->predicted) {
    const tuner::GemmShape& g = *gemm;
    return absl::FailedPreconditionError(
        StrCat("no result in ", (*answers)->origin().description, " for m=", g.m, " n=", g.n,
               " k=", g.k, " batch=", g.batch, " ", tuner::DTypeName(g.dtype), " ", g.Layout(),
               " on ", (*gpu)->name, ", and the model has no path for ", tuner::DTypeName(g.dtype),
               " there (`crest gpus` lists each "
               "GPU's dtypes)"));
  }
  PrinterFor(io)->Print(LookupResult{**gpu, *gemm, *std::move(answer), (*answers)->origin()});
  return absl::OkStatus();
}

}  // namespace

Command RegisterLookup(CLI::App& root) {
  auto flags = std::make_shared<LookupFlags>();
  Command cmd;
  cmd.app = AddCommand(root, "lookup", "Show the best known result for one GEMM from a database");
  CLI::App& app = *cmd.app;
  AddGemmFlags(app, flags->gemm);
  AddOption(app, "--gpu", flags->gpu, "catalogued GPU").Required();
  AddAnswerFlags(app, flags->answer);
  cmd.run = [flags](Io& io) { return RunLookup(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
