// `crest design`'s answer as text, JSON and CSV.
#include <map>

#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

std::string Config(const DesignConfig& c) {
  const ModelConfig& m = c.model;
  return StrCat("h=", m.hidden, " a=", m.heads, " g=", m.KvHeads(), " f=", m.d_ff, " v=", m.vocab,
                " s=", m.seq, " b=", m.micro_batch, " t=", m.tp, " L=", c.layers);
}

std::string Billions(int64_t n) { return Fixed(static_cast<double>(n) / 1e9, 3); }

// The ranked rows to show: the first `top` of each kind.
std::vector<const DesignRow*> Shown(const DesignResult& r) {
  std::vector<const DesignRow*> out;
  std::map<Source, int> seen;
  for (const DesignRow& row : r.rows) {
    if (!row.rule.ok()) continue;
    if (r.top > 0 && ++seen[row.step_train.source] > r.top) continue;
    out.push_back(&row);
  }
  return out;
}

Table DesignTable(const DesignResult& r, bool plain) {
  Table table({{"rank"}, {"tie"}, {"h"}, {"a"}, {"g"}, {"d"}, {"f"}, {"v"}, {"s"}, {"b"}, {"t"},
               {"L"}, {"params_B"}, {"params/rank_B"}, {"train_GFLOP/token"},
               {"layer_fwd_us"}, {"train_us/layer"}, {"attn_core_fwd_us"}, {"comm_us/layer"},
               {"tokens/s/GPU"}, {"overlapped"}, {"MFU_sustained_%"},
               {"source", Table::Align::kLeft}, {"run", Table::Align::kLeft}});
  int rank = 0;
  for (const DesignRow* row : Shown(r)) {
    const ModelConfig& m = row->config.model;
    table.AddRow({std::to_string(++rank), std::to_string(row->tie_group),
                  std::to_string(m.hidden), std::to_string(m.heads), std::to_string(m.KvHeads()),
                  std::to_string(m.HeadDim()), std::to_string(m.d_ff), std::to_string(m.vocab),
                  std::to_string(m.seq), std::to_string(m.micro_batch), std::to_string(m.tp),
                  std::to_string(row->config.layers), Billions(row->params.total),
                  Billions(row->params.per_rank), Fixed(row->train_flops_per_token / 1e9, 2),
                  Fixed(row->layer_fwd.time_us, 1), Fixed(row->layer_train_amortized_us, 1),
                  Fixed(row->attention_core_fwd.time_us, 1),
                  Fixed(row->comm_layer_train.time_us, 1),
                  plain ? Fixed(row->tokens_per_s_per_gpu, 1)
                        : Grouped(static_cast<int64_t>(row->tokens_per_s_per_gpu)),
                  plain ? Fixed(row->tokens_per_s_per_gpu_overlapped, 1)
                        : Grouped(static_cast<int64_t>(row->tokens_per_s_per_gpu_overlapped)),
                  Fixed(100 * row->mfu_sustained, 1),
                  std::string(SourceName(row->step_train.source)),
                  RunColumn(row->step_train.runs, row->step_train.pooled)});
  }
  return table;
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
  j["attention_basis"] = row.attention_basis;
  j["logits_fwd"] = TimingJson(row.logits_fwd);
  j["logits_train"] = TimingJson(row.logits_train);
  j["step_train"] = TimingJson(row.step_train);
  j["layer_train_amortized_us"] = row.layer_train_amortized_us;
  j["comm_layer_train"] = TimingJson(row.comm_layer_train);
  j["comm_basis"] = row.comm_basis;
  j["tokens_per_s_per_gpu"] = row.tokens_per_s_per_gpu;
  j["tokens_per_s_per_gpu_overlapped"] = row.tokens_per_s_per_gpu_overlapped;
  j["mfu_sustained"] = row.mfu_sustained;
  j["mfu_peak"] = row.mfu_peak;
  j["warnings"] = row.warnings;
  return j;
}

std::string KindsOf(const DesignResult& r) {
  std::vector<Source> kinds;
  for (const DesignRow& row : r.rows) {
    if (row.rule.ok()) kinds.push_back(row.step_train.source);
  }
  return kinds.empty() ? "none" : CountKinds(kinds);
}

constexpr const char* kGemmsOnlyNote =
    "comm_us/layer = tensor parallelism's communication for one layer's train step, PREDICTED "
    "(ring all-reduces on the GPU's NVLink or PCIe, 2 forward and 2 backward; link efficiency "
    "and latency assumed; 0 at t=1); tokens/s/GPU adds it to compute, overlapped hides it "
    "behind compute (the step is the longer of the two); norms, softmax, activations and the "
    "optimizer step are not timed, so tokens/s and MFU are upper bounds";

// What the attention core's figures are, for the kernel the answer assumed.
std::string AttentionNote(const DesignOptions& o) {
  if (o.attention == AttentionKernel::kUnfused) {
    return "attention's core is timed as its two batched GEMMs (attn_score = Q*K^T, attn_value = "
           "P*V, one per head and sequence), writing the s*s scores (--attention unfused); "
           "fused kernels (FlashAttention), which training runs, never write them";
  }
  return StrCat("attention's core is one fused kernel (FlashAttention, causal), PREDICTED by ",
                kAttentionModelVersion,
                " from published H100 SXM throughput at the config's head dim and sequence "
                "(Shah et al. 2024, Fig. 5; FlashAttention-3 on Hopper, -2 elsewhere, scaled by "
                "the GPU's GEMM rate; backward 2.5x the forward FLOPs at the same rate, assumed), "
                "expected error +/-",
                static_cast<int>(100 * kFusedAttentionError),
                "%, whatever the GEMMs' source (--attention unfused: its two GEMMs)");
}

// The runs the shown rows' times come from, each once.
std::vector<RunInfo> RunsOf(const DesignResult& r) {
  std::vector<RunInfo> runs;
  for (const DesignRow* row : Shown(r)) MergeRuns(runs, row->step_train.runs);
  return runs;
}

}  // namespace

nlohmann::json Json(const DesignResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  int rank = 0;
  for (const DesignRow* row : Shown(r)) rows.push_back(RowJson(*row, ++rank));
  nlohmann::json broken = nlohmann::json::array();
  for (const DesignRow& row : r.rows) {
    if (!row.rule.ok()) broken.push_back(RowJson(row, 0));
  }
  return {{"schema_version", kJsonSchemaVersion},
          {"gpu", std::string(r.gpu.name)},
          {"dtype", std::string(DTypeName(r.dtype))},
          {"answered_by", r.origin.description},
          {"run_choice", r.origin.database ? nlohmann::json(answers::RunChoiceName(r.origin.options.runs))
                                           : nlohmann::json(nullptr)},
          {"algo_choice", r.origin.database ? nlohmann::json(AlgoChoiceName(r.origin.options.algo))
                                            : nlohmann::json(nullptr)},
          {"runs", RunsJson(RunsOf(r))},
          {"search", r.search.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.search)},
          {"sustained_tflops", r.options.sustained_tflops},
          {"peak_tflops", r.options.peak_tflops},
          {"ranking", "rank 1 is the headline best: the fastest of the first kind of number there "
                      "is (measured, mixed, predicted); that kind's rows first, then the others, "
                      "each listed tie group by tie group, by tokens/s per GPU"},
          {"tie_rule", kTieRule},
          {"attention", r.options.attention == AttentionKernel::kFused ? "fused" : "unfused"},
          {"attention_note", AttentionNote(r.options)},
          {"gemms_only_note", kGemmsOnlyNote},
          {"configs", rows},
          {"broken_rules", broken}};
}

Table Csv(const DesignResult& r) { return DesignTable(r, true); }

void Text(const DesignResult& r, std::ostream& out) {
  size_t ranked = 0;
  for (const DesignRow& row : r.rows) ranked += row.rule.ok() ? 1U : 0U;
  out << "model designs on " << r.gpu.name << ", " << DTypeName(r.dtype) << ": " << r.rows.size()
      << " configurations" << (r.search.empty() ? "" : " " + r.search) << ", " << ranked
      << " ranked (" << KindsOf(r) << "), " << r.rows.size() - ranked
      << " break a rule\nanswered by: " << r.origin.description
      << "\nstep = one micro-batch (b*s tokens) forward + backward on one tensor-parallel rank: "
         "every GEMM of every layer, plus the logits once\nMFU against the sustained dense rate "
      << Fixed(r.options.sustained_tflops, 1) << " TFLOP/s (the model's full-rate tile rate; "
      << "datasheet peak " << Fixed(r.options.peak_tflops, 1) << ")\n";
  if (const std::string runs = RunsLine(RunsOf(r), r.origin.options); !runs.empty()) {
    out << runs << "\n";
  }
  out << "\n";
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
  out << "\nRank 1 is the fastest of the first kind of number there is (measured, mixed, "
         "predicted); each kind's rows are ranked by tokens/s per GPU. "
      << kTieRule
      << " (an interval here is the step time's, per token). params/rank = what one "
         "tensor-parallel rank holds. train_us/layer = one layer's train GEMMs plus the logits' "
         "train GEMMs spread over the L layers. run = the sweep job the measured times come "
         "from. "
      << AttentionNote(r.options) << "; " << kGemmsOnlyNote << ".\n";
}

}  // namespace crest::cli
