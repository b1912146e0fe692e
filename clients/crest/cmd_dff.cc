// `crest dff`: rank d_ff candidates near r·h by the time of the SwiGLU MLP.
#include <memory>

#include "answer_flags.h"
#include "cli.h"
#include "dff_flags.h"
#include "printer.h"
#include "results.h"

namespace crest::cli {
namespace {

struct DffCommandFlags {
  DffFlags window;
  int top = tuner::kDefaultTop;
  AnswerFlags answer;
};

absl::Status RunDff(const DffCommandFlags& f, Io& io) {
  auto query = ToDffQuery(f.window, f.top);
  if (!query.ok()) return query.status();
  auto gpu = tuner::FindGpu(f.window.gpu);
  if (!gpu.ok()) return gpu.status();
  if (auto s = tuner::CheckDtypePath(**gpu, query->dtype); !s.ok()) return s;
  auto answers = OpenAnswers(f.answer);
  if (!answers.ok()) return answers.status();
  auto ranking = (*answers)->Dff(*query, **gpu);
  if (!ranking.ok()) return ranking.status();
  PrinterFor(io)->Print(DffResult{**gpu, *query, *std::move(ranking), (*answers)->origin()});
  return absl::OkStatus();
}

}  // namespace

Command RegisterDff(CLI::App& root) {
  auto flags = std::make_shared<DffCommandFlags>();
  Command cmd;
  cmd.app =
      AddCommand(root, "dff", "Rank SwiGLU d_ff candidates near r*h by the time of the whole MLP");
  AddDffFlags(*cmd.app, flags->window);
  AddOption(*cmd.app, "--top", flags->top, "rows to show of each kind (0 = all)").ShowDefault();
  AddAnswerFlags(*cmd.app, flags->answer);
  AddFlag(*cmd.app, "--predict-only", flags->answer.predict_only,
          "the model's prediction alone: no database is read (with --server, the "
          "crestd's model predicts)");
  cmd.run = [flags](Io& io) { return RunDff(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
