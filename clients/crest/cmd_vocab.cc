// `crest vocab`: vocabulary paddings ranked by the logits GEMM's time.
#include <map>
#include <memory>
#include <string>

#include "answer_flags.h"
#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/vocab.h"
#include "printer.h"
#include "timed_results.h"

namespace crest::cli {
namespace {

struct VocabFlags {
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t tp = 1;
  int64_t tokens = tuner::kDefaultTokens;
  std::string dtype{tuner::kDefaultDtype};
  std::string rank_by = "train";
  std::string gpu;
  AnswerFlags answer;
};

absl::Status RunVocab(const VocabFlags& f, Io& io) {
  auto gpu = tuner::FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto dtype = tuner::ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  if (auto s = tuner::CheckDtypePath(**gpu, *dtype); !s.ok()) return s;
  tuner::VocabQuery q{f.vocab, f.hidden, f.tp, f.tokens, *dtype, true};
  if (auto s = ParsePass(f.rank_by, &q.rank_by_train); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("rank-by: '", f.rank_by, "' is not fwd or train"));
  }
  auto answers = OpenAnswers(f.answer);
  if (!answers.ok()) return answers.status();
  auto ranking = (*answers)->Vocab(q, **gpu);
  if (!ranking.ok()) return ranking.status();
  PrinterFor(io)->Print(VocabResult{**gpu, q, *std::move(ranking), (*answers)->origin()});
  return absl::OkStatus();
}

}  // namespace

Command RegisterVocab(CLI::App& root) {
  auto flags = std::make_shared<VocabFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "vocab",
      "Rank vocabulary paddings (multiples of 8..1024 times tp) by the logits GEMM's time");
  CLI::App& app = *cmd.app;
  AddOption(app, "--vocab", flags->vocab, "vocabulary size V as the tokenizer has it").Required();
  AddOption(app, "--hidden", flags->hidden, "hidden size h (K of the logits GEMM)").Required();
  AddOption(app, "--tp", flags->tp, "tensor-parallel degree t (N = V/t)").ShowDefault();
  AddOption(app, "--tokens", flags->tokens, "M of the logits GEMM: tokens per rank (b*s)")
      .ShowDefault();
  AddOption(app, "--dtype", flags->dtype, kDtypeHelp).ShowDefault();
  AddOption(app, "--rank-by", flags->rank_by, "rank by the fwd or the train time").ShowDefault();
  AddOption(app, "--gpu", flags->gpu, "catalogued GPU (see `crest gpus`)").Required();
  AddAnswerFlags(app, flags->answer);
  cmd.run = [flags](Io& io) { return RunVocab(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
