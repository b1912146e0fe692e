// `crest vocab`: vocabulary paddings ranked by the logits GEMM's time.
#include <map>
#include <memory>
#include <string>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/vocab.h"
#include "gemm_source.h"
#include "json_views.h"
#include "table.h"

namespace crest::cli {
namespace {

struct VocabFlags {
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t tp = 1;
  int64_t tokens = 8192;
  std::string dtype = "bf16";
  std::string rank_by = "train";
  std::string gpu;
  AnswerFlags answer;
};

std::string Speedup(double s, bool plain) {
  if (s <= 0) return plain ? "" : "-";
  return Fixed(s, 3) + (plain ? "" : "x");
}

Table VocabTable(const VocabQuery& q, const VocabRanking& r, bool plain) {
  Table table({{"rank"},
               {"tie"},
               {"vocab"},
               {"multiple_of"},
               {"fwd_us"},
               {"train_us"},
               {"train_TFLOP/s"},
               {"speedup"},
               {"extra_params"},
               {"extra_params/rank"},
               {"source", Table::Align::kLeft}});
  std::map<Source, int> seen;
  for (const VocabRow& row : r.rows) {
    const Timing& ranked = q.rank_by_train ? row.train : row.fwd;
    const std::string mark = plain ? "" : (row.padded == r.baseline ? "*" : "");
    table.AddRow({std::to_string(++seen[ranked.source]), std::to_string(row.tie_group),
                  std::to_string(row.padded) + mark,
                  row.multiple > 0 ? std::to_string(row.multiple) : (plain ? "" : "-"),
                  Fixed(row.fwd.time_us, 1), Fixed(row.train.time_us, 1),
                  Fixed(row.train_tflops, 1), Speedup(row.speedup, plain),
                  Grouped(row.extra_params), Grouped(row.extra_params_per_rank),
                  std::string(SourceName(ranked.source))});
  }
  return table;
}

nlohmann::json VocabJson(const VocabQuery& q, const VocabRanking& r, const std::string& gpu,
                         const std::string& source) {
  nlohmann::json rows = nlohmann::json::array();
  std::map<Source, int> seen;
  const auto timing = [](const Timing& t) {
    return nlohmann::json{{"time_us", t.time_us},
                          {"time_low_us", t.low_us},
                          {"time_high_us", t.high_us},
                          {"source", SourceName(t.source)},
                          {"provenance", t.provenance}};
  };
  for (const VocabRow& row : r.rows) {
    const Timing& ranked = q.rank_by_train ? row.train : row.fwd;
    rows.push_back({{"rank", ++seen[ranked.source]},
                    {"tie_group", row.tie_group},
                    {"vocab", row.padded},
                    {"multiple_of", row.multiple > 0 ? nlohmann::json(row.multiple) : nullptr},
                    {"unpadded", row.unpadded},
                    {"fwd", timing(row.fwd)},
                    {"train", timing(row.train)},
                    {"train_tflops", row.train_tflops},
                    {"speedup", row.speedup > 0 ? nlohmann::json(row.speedup) : nullptr},
                    {"extra_params", row.extra_params},
                    {"extra_params_per_rank", row.extra_params_per_rank},
                    {"source", SourceName(ranked.source)}});
  }
  return {{"schema_version", kJsonSchemaVersion},
          {"gpu", gpu},
          {"vocab", q.vocab},
          {"hidden", q.hidden},
          {"tp", q.tp},
          {"tokens", q.tokens},
          {"dtype", std::string(DTypeName(q.dtype))},
          {"rank_by", q.rank_by_train ? "train" : "fwd"},
          {"answered_by", source},
          {"baseline", r.baseline},
          {"ranking", "rows are grouped by source (measured, mixed, predicted), each ranked "
                      "within its own source; rank is within the source"},
          {"candidates", rows}};
}

void PrintHuman(const VocabQuery& q, const VocabRanking& r, const GpuSpec& gpu,
                const std::string& source, std::ostream& out) {
  out << "vocabulary " << q.vocab << " padded for h=" << q.hidden << ", tp=" << q.tp << " on "
      << gpu.name << ": the logits GEMM (M=" << q.tokens << " tokens, N=vocab/" << q.tp
      << ", K=" << q.hidden << "), " << DTypeName(q.dtype) << ", ranked by "
      << (q.rank_by_train ? "train (forward + data and weight gradients)" : "forward")
      << " time\nanswered by: " << source << "\n";
  std::vector<Source> kinds;
  for (const VocabRow& row : r.rows) kinds.push_back((q.rank_by_train ? row.train : row.fwd).source);
  out << r.rows.size() << " sizes: " << CountKinds(kinds) << "\n";
  if (q.vocab % q.tp != 0) {
    out << "vocab " << q.vocab << " is not divisible by tp=" << q.tp
        << ", so it must be padded; baseline = the smallest padding, " << r.baseline << "\n";
  }
  out << "\n";
  VocabTable(q, r, false).Print(out);
  out << "\n* = baseline. multiple_of = the largest of 8..1024 times tp the size is a multiple of. "
         "speedup = the baseline's time / time, both of the same kind (measured or predicted). "
         "extra_params = (vocab - " << q.vocab << ")*h for each vocab-by-h table (the embedding, "
         "and the output layer when it is not tied); /rank = split over tp. Rows are ranked "
         "within their kind; tie = rows whose intervals reach their group's fastest.\n";
}

absl::Status RunVocab(const VocabFlags& f, Io& io) {
  auto gpu = FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto dtype = ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  if (auto s = CheckDtypePath(**gpu, *dtype); !s.ok()) return s;
  VocabQuery q{f.vocab, f.hidden, f.tp, f.tokens, *dtype, true};
  if (auto s = ParsePass(f.rank_by, &q.rank_by_train); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("rank-by: '", f.rank_by, "' is not fwd or train"));
  }
  auto source = OpenGemmSource(f.answer, **gpu, *dtype);
  if (!source.ok()) return source.status();
  GemmSource& answers = **source;
  auto ranking = RankVocabPaddings(q, [&answers](const GemmShape& g) { return answers.Time(g); });
  if (!ranking.ok()) return ranking.status();
  if (io.csv) {
    VocabTable(q, *ranking, true).PrintCsv(io.out);
  } else if (io.json) {
    io.out << VocabJson(q, *ranking, std::string((*gpu)->name), answers.Describe()).dump(2)
           << '\n';
  } else {
    PrintHuman(q, *ranking, **gpu, answers.Describe(), io.out);
  }
  return absl::OkStatus();
}

}  // namespace

Command RegisterVocab(CLI::App& root) {
  auto flags = std::make_shared<VocabFlags>();
  Command cmd;
  cmd.app = root.add_subcommand(
      "vocab", "Rank vocabulary paddings (multiples of 8..1024 times tp) by the logits GEMM's time");
  CLI::App& app = *cmd.app;
  app.add_option("--vocab", flags->vocab, "vocabulary size V as the tokenizer has it")->required();
  app.add_option("--hidden", flags->hidden, "hidden size h (K of the logits GEMM)")->required();
  app.add_option("--tp", flags->tp, "tensor-parallel degree t (N = V/t)")->capture_default_str();
  app.add_option("--tokens", flags->tokens, "M of the logits GEMM: tokens per rank (b*s)")
      ->capture_default_str();
  app.add_option("--dtype", flags->dtype, kDtypeHelp)->capture_default_str();
  app.add_option("--rank-by", flags->rank_by, "rank by the fwd or the train time")
      ->capture_default_str();
  app.add_option("--gpu", flags->gpu, "catalogued GPU (see `crest gpus`)")->required();
  AddAnswerFlags(app, flags->answer);
  cmd.run = [flags](Io& io) { return RunVocab(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
