// `crest vocab`'s answer as text, JSON and CSV.
#include <map>

#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"
#include "timed_results.h"

namespace crest::cli {
namespace {

const tuner::Timing& Ranked(const tuner::VocabQuery& q, const tuner::VocabRow& r) {
  return q.rank_by_train ? r.train : r.fwd;
}

Table VocabTable(const VocabResult& res, bool plain) {
  const tuner::VocabQuery& q = res.query;
  std::vector<Table::Column> columns = {{"rank"},          {"tie"},    {"vocab"},
                                        {"multiple_of"},   {"fwd_us"}, {"train_us"},
                                        {"train_TFLOP/s"}, {"speedup"}};
  if (plain) columns.push_back({"speedup_basis", Table::Align::kLeft});
  for (Table::Column c : std::vector<Table::Column>{{"extra_params"},
                                                    {"extra_params/rank"},
                                                    {"source", Table::Align::kLeft},
                                                    {"run", Table::Align::kLeft}}) {
    columns.push_back(c);
  }
  Table table(std::move(columns));
  int rank = 0;
  for (const tuner::VocabRow& row : res.ranking.rows) {
    const tuner::Timing& ranked = Ranked(q, row);
    const std::string mark = plain ? "" : (row.padded == res.ranking.baseline ? "*" : "");
    std::vector<std::string> cells = {
        std::to_string(++rank),
        std::to_string(row.tie_group),
        std::to_string(row.padded) + mark,
        row.multiple > 0 ? std::to_string(row.multiple) : (plain ? "" : "-"),
        Fixed(row.fwd.time_us, 1),
        Fixed(row.train.time_us, 1),
        Fixed(row.train_tflops, 1),
        SpeedupCell(row.speedup, ranked.source, row.speedup_basis, plain)};
    if (plain)
      cells.push_back(row.speedup > 0 ? std::string(tuner::SourceName(row.speedup_basis)) : "");
    cells.push_back(Grouped(row.extra_params));
    cells.push_back(Grouped(row.extra_params_per_rank));
    cells.push_back(std::string(tuner::SourceName(ranked.source)));
    cells.push_back(RunColumn(ranked.runs, ranked.pooled));
    table.AddRow(std::move(cells));
  }
  return table;
}

}  // namespace

Table Csv(const VocabResult& res) { return VocabTable(res, true); }

nlohmann::json Json(const VocabResult& res) {
  const tuner::VocabQuery& q = res.query;
  nlohmann::json rows = nlohmann::json::array();
  int rank = 0;
  for (const tuner::VocabRow& row : res.ranking.rows) {
    const tuner::Timing& ranked = Ranked(q, row);
    rows.push_back({{"rank", ++rank},
                    {"tie_group", row.tie_group},
                    {"vocab", row.padded},
                    {"multiple_of", row.multiple > 0 ? nlohmann::json(row.multiple) : nullptr},
                    {"unpadded", row.unpadded},
                    {"fwd", TimingJson(row.fwd)},
                    {"train", TimingJson(row.train)},
                    {"train_tflops", row.train_tflops},
                    {"speedup", row.speedup > 0 ? nlohmann::json(row.speedup) : nullptr},
                    {"speedup_basis", tuner::SourceName(row.speedup_basis)},
                    {"extra_params", row.extra_params},
                    {"extra_params_per_rank", row.extra_params_per_rank},
                    {"source", tuner::SourceName(ranked.source)}});
  }
  nlohmann::json doc = {{"schema_version", kJsonSchemaVersion},
                        {"gpu", std::string(res.gpu.name)},
                        {"vocab", q.vocab},
                        {"hidden", q.hidden},
                        {"tp", q.tp},
                        {"tokens", q.tokens},
                        {"dtype", std::string(tuner::DTypeName(q.dtype))},
                        {"rank_by", q.rank_by_train ? "train" : "fwd"},
                        {"runs", RunsJson(res.ranking.runs)},
                        {"baseline", res.ranking.baseline},
                        {"tie_rule", tuner::kTieRule},
                        {"ranking",
                         "rank 1 is the headline best (the largest speed-up over a baseline of its "
                         "own kind); rows of its kind first, then the other kinds, each listed tie "
                         "group by tie group, fastest first"},
                        {"candidates", rows}};
  AddOriginJson(res.origin, doc);
  return doc;
}

void Text(const VocabResult& res, std::ostream& out) {
  const tuner::VocabQuery& q = res.query;
  const tuner::VocabRanking& r = res.ranking;
  out << "vocabulary " << q.vocab << " padded for h=" << q.hidden << ", tp=" << q.tp << " on "
      << res.gpu.name << ": the logits GEMM (M=" << q.tokens << " tokens, N=vocab/" << q.tp
      << ", K=" << q.hidden << "), " << tuner::DTypeName(q.dtype) << ", ranked by "
      << (q.rank_by_train ? "train (forward + data and weight gradients)" : "forward")
      << " time\nanswered by: " << res.origin.description << "\n";
  if (const std::string runs = RunsLine(r.runs, res.origin.options); !runs.empty()) {
    out << runs << "\n";
  }
  std::vector<tuner::Source> kinds;
  for (const tuner::VocabRow& row : r.rows) kinds.push_back(Ranked(q, row).source);
  out << r.rows.size() << " sizes: " << CountKinds(kinds) << "\n";
  if (q.vocab % q.tp != 0) {
    out << "vocab " << q.vocab << " is not divisible by tp=" << q.tp
        << ", so it must be padded; baseline = the smallest padding, " << r.baseline << "\n";
  }
  out << "\n";
  VocabTable(res, false).Print(out);
  out << "\n* = baseline. multiple_of = the largest of 8..1024 times tp the size is a multiple of. "
         "speedup = the baseline's time / time, both of the same kind (measured or predicted; "
      << kPredictedBasisNote << "). extra_params = (vocab - " << q.vocab
      << ")*h for each vocab-by-h table (the embedding, and the output layer when it is not "
         "tied); /rank = split over tp. Rank 1 is the headline best: the largest speed-up over a "
         "baseline of its own kind. "
      << tuner::kTieRule << ".\n";
}

}  // namespace crest::cli
