#include "design_output.h"

#include <map>

#include "crest/common/str_cat.h"
#include "gemm_source.h"
#include "json_views.h"
#include "table.h"

namespace crest::cli {
namespace {

std::string Config(const DesignConfig& c) {
  const ModelConfig& m = c.model;
  return StrCat("h=", m.hidden, " a=", m.heads, " g=", m.KvHeads(), " f=", m.d_ff, " v=", m.vocab,
                " s=", m.seq, " b=", m.micro_batch, " t=", m.tp, " L=", c.layers);
}

std::string Billions(int64_t n) { return Fixed(static_cast<double>(n) / 1e9, 3); }

// The ranked rows to show: the first `top` of each kind.
std::vector<const DesignRow*> Shown(const DesignReport& r) {
  std::vector<const DesignRow*> out;
  std::map<Source, int> seen;
  for (const DesignRow& row : r.rows) {
    if (!row.rule.ok()) continue;
    if (r.top > 0 && ++seen[row.step_train.source] > r.top) continue;
    out.push_back(&row);
  }
  return out;
}

Table DesignTable(const DesignReport& r, bool plain) {
  Table table({{"rank"}, {"tie"}, {"h"}, {"a"}, {"g"}, {"d"}, {"f"}, {"v"}, {"s"}, {"b"}, {"t"},
               {"L"}, {"params_B"}, {"params/rank_B"}, {"train_GFLOP/token"},
               {"layer_fwd_us"}, {"train_us/layer"}, {"attn_core_fwd_us"}, {"tokens/s/GPU"},
               {"MFU_sustained_%"}, {"source", Table::Align::kLeft}});
  std::map<Source, int> rank;
  for (const DesignRow* row : Shown(r)) {
    const ModelConfig& m = row->config.model;
    table.AddRow({std::to_string(++rank[row->step_train.source]), std::to_string(row->tie_group),
                  std::to_string(m.hidden), std::to_string(m.heads), std::to_string(m.KvHeads()),
                  std::to_string(m.HeadDim()), std::to_string(m.d_ff), std::to_string(m.vocab),
                  std::to_string(m.seq), std::to_string(m.micro_batch), std::to_string(m.tp),
                  std::to_string(row->config.layers), Billions(row->params.total),
                  Billions(row->params.per_rank), Fixed(row->train_flops_per_token / 1e9, 2),
                  Fixed(row->layer_fwd.time_us, 1), Fixed(row->layer_train_amortized_us, 1),
                  Fixed(row->attention_core_fwd.time_us, 1),
                  plain ? Fixed(row->tokens_per_s_per_gpu, 1)
                        : Grouped(static_cast<int64_t>(row->tokens_per_s_per_gpu)),
                  Fixed(100 * row->mfu_sustained, 1),
                  std::string(SourceName(row->step_train.source))});
  }
  return table;
}

nlohmann::json TimingJson(const Timing& t) {
  return {{"time_us", t.time_us}, {"time_low_us", t.low_us}, {"time_high_us", t.high_us},
          {"source", SourceName(t.source)}, {"provenance", t.provenance}};
}

nlohmann::json RowJson(const DesignRow& row, int rank) {
  const ModelConfig& m = row.config.model;
  nlohmann::json j = {{"config",
                       {{"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.KvHeads()},
                        {"head_dim", m.HeadDim()}, {"d_ff", m.d_ff}, {"vocab", m.vocab},
                        {"seq", m.seq}, {"micro_batch", m.micro_batch}, {"tp", m.tp},
                        {"layers", row.config.layers},
                        {"tied_embeddings", row.config.tied_embeddings}}}};
  if (!row.rule.ok()) {
    j["rule"] = std::string(row.rule.message());
    return j;
  }
  j["rank"] = rank;
  j["tie_group"] = row.tie_group;
  j["source"] = SourceName(row.step_train.source);
  j["params"] = {{"total", row.params.total}, {"per_layer", row.params.per_layer},
                 {"embedding", row.params.embedding}, {"per_tp_rank", row.params.per_rank}};
  j["fwd_flops_per_token"] = row.fwd_flops_per_token;
  j["train_flops_per_token"] = row.train_flops_per_token;
  j["layer_fwd"] = TimingJson(row.layer_fwd);
  j["layer_train"] = TimingJson(row.layer_train);
  j["attention_core_fwd"] = TimingJson(row.attention_core_fwd);
  j["logits_fwd"] = TimingJson(row.logits_fwd);
  j["logits_train"] = TimingJson(row.logits_train);
  j["step_train"] = TimingJson(row.step_train);
  j["layer_train_amortized_us"] = row.layer_train_amortized_us;
  j["tokens_per_s_per_gpu"] = row.tokens_per_s_per_gpu;
  j["mfu_sustained"] = row.mfu_sustained;
  j["mfu_peak"] = row.mfu_peak;
  j["warnings"] = row.warnings;
  return j;
}

std::string KindsOf(const DesignReport& r) {
  std::vector<Source> kinds;
  for (const DesignRow& row : r.rows) {
    if (row.rule.ok()) kinds.push_back(row.step_train.source);
  }
  return kinds.empty() ? "none" : CountKinds(kinds);
}

constexpr const char* kGemmsOnlyNote =
    "only GEMMs are timed: norms, softmax, activations, the optimizer step and communication "
    "are not, so tokens/s and MFU are upper bounds";

constexpr const char* kAttentionNote =
    "attention's core is timed as its two batched GEMMs (attn_score = Q*K^T, attn_value = P*V, "
    "one per head and sequence); fused attention kernels (FlashAttention) run it as one kernel "
    "that never writes the s*s scores, so a real run's attention time differs from this";

void PrintJson(const DesignReport& r, Io& io) {
  nlohmann::json rows = nlohmann::json::array();
  std::map<Source, int> rank;
  for (const DesignRow* row : Shown(r)) rows.push_back(RowJson(*row, ++rank[row->step_train.source]));
  nlohmann::json broken = nlohmann::json::array();
  for (const DesignRow& row : r.rows) {
    if (!row.rule.ok()) broken.push_back(RowJson(row, 0));
  }
  io.out << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                           {"gpu", std::string(r.gpu.name)},
                           {"dtype", std::string(DTypeName(r.dtype))},
                           {"answered_by", r.source},
                           {"search", r.search.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.search)},
                           {"sustained_tflops", r.options.sustained_tflops},
                           {"peak_tflops", r.options.peak_tflops},
                           {"ranking", "grouped by the source of the train step's time "
                                       "(measured, mixed, predicted), each ranked by tokens/s "
                                       "per GPU within its source"},
                           {"attention_note", kAttentionNote},
                           {"gemms_only_note", kGemmsOnlyNote},
                           {"configs", rows},
                           {"broken_rules", broken}}
                .dump(2)
         << '\n';
}

void PrintHuman(const DesignReport& r, std::ostream& out) {
  size_t ranked = 0;
  for (const DesignRow& row : r.rows) ranked += row.rule.ok() ? 1U : 0U;
  out << "model designs on " << r.gpu.name << ", " << DTypeName(r.dtype) << ": " << r.rows.size()
      << " configurations" << (r.search.empty() ? "" : " " + r.search) << ", " << ranked
      << " ranked (" << KindsOf(r) << "), " << r.rows.size() - ranked
      << " break a rule\nanswered by: " << r.source
      << "\nstep = one micro-batch (b*s tokens) forward + backward on one tensor-parallel rank: "
         "every GEMM of every layer, plus the logits once\nMFU against the sustained dense rate "
      << Fixed(r.options.sustained_tflops, 1) << " TFLOP/s (the model's full-rate tile rate; "
      << "datasheet peak " << Fixed(r.options.peak_tflops, 1) << ")\n\n";
  if (ranked > 0) DesignTable(r, false).Print(out);
  bool header = false;
  for (const DesignRow& row : r.rows) {
    if (row.rule.ok()) continue;
    if (!header) out << "\nnot ranked, each breaks a rule:\n";
    header = true;
    out << "  " << Config(row.config) << ": " << row.rule.message() << "\n";
  }
  header = false;
  for (const DesignRow* row : Shown(r)) {
    for (const std::string& w : row->warnings) {
      if (!header) out << "\nwarnings:\n";
      header = true;
      out << "  " << Config(row->config) << ": " << w << "\n";
    }
  }
  out << "\nRows are grouped by the kind of their step time (measured, mixed, predicted) and "
         "ranked within it by tokens/s per GPU; tie = rows whose step intervals reach their "
         "group's fastest. params/rank = what one tensor-parallel rank holds. train_us/layer = one "
         "layer's train GEMMs plus the logits' train GEMMs spread over the L layers. "
      << kAttentionNote << "; " << kGemmsOnlyNote << ".\n";
}

}  // namespace

void PrintDesigns(const DesignReport& r, Io& io) {
  if (io.csv) {
    DesignTable(r, true).PrintCsv(io.out);
  } else if (io.json) {
    PrintJson(r, io);
  } else {
    PrintHuman(r, io.out);
  }
}

}  // namespace crest::cli
