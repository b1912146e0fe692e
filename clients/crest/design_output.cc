// `crest design`'s answer as text, JSON and CSV.
#include <map>

#include "crest/common/str_cat.h"
#include "crest/tuner/timing_ops.h"
#include "json_views.h"
#include "outputs.h"
#include "timed_results.h"

namespace crest::cli {
namespace {

std::string Config(const tuner::DesignConfig& c) {
  const tuner::ModelConfig& m = c.model;
  return StrCat("h=", m.hidden, " a=", m.heads, " g=", m.KvHeads(), " f=", m.d_ff, " v=", m.vocab,
                " s=", m.seq, " b=", m.micro_batch, " t=", m.tp, " L=", c.layers);
}

std::string Billions(int64_t n) { return Fixed(static_cast<double>(n) / 1e9, 3); }

// The ranked rows to show: the first `top` of each kind.
std::vector<const tuner::DesignRow*> Shown(const DesignResult& r) {
  std::vector<const tuner::DesignRow*> out;
  std::map<tuner::Source, int> seen;
  for (const tuner::DesignRow& row : r.rows) {
    if (!row.rule.ok()) continue;
    if (r.top > 0 && ++seen[row.step_train.source] > r.top) continue;
    out.push_back(&row);
  }
  return out;
}

// `part` of `whole` in percent, one decimal, without the sign: "12.3".
std::string ShareInPercent(double part, double whole) {
  return whole > 0 ? Fixed(100 * part / whole, 1) : "0.0";
}

Table DesignTable(const DesignResult& r, bool plain) {
  Table table({{"rank"},
               {"tie"},
               {"h"},
               {"a"},
               {"g"},
               {"f"},
               {"v"},
               {"s"},
               {"b"},
               {"t"},
               {"dp"},
               {"L"},
               {"params_B"},
               {"step_ms"},
               {"gemm_%"},
               {"attn_%"},
               {"other_%"},
               {"recomp_%"},
               {"comm_%"},
               {"optim_%"},
               {"tokens/s/GPU"},
               {"model_TFLOP/s"},
               {"MFU_%"},
               {"HFU_%"},
               {"mem_GiB"},
               {"source", Table::Align::kLeft},
               {"run", Table::Align::kLeft}});
  int rank = 0;
  for (const tuner::DesignRow* row : Shown(r)) {
    const tuner::ModelConfig& m = row->config.model;
    const tuner::StepBreakdown& s = row->step;
    const double total = s.total.time_us;
    table.AddRow({std::to_string(++rank),
                  std::to_string(row->tie_group),
                  std::to_string(m.hidden),
                  std::to_string(m.heads),
                  std::to_string(m.KvHeads()),
                  std::to_string(m.d_ff),
                  std::to_string(m.vocab),
                  std::to_string(m.seq),
                  std::to_string(m.micro_batch),
                  std::to_string(m.tp),
                  std::to_string(row->config.layout.dp),
                  std::to_string(row->config.layers),
                  Billions(row->params.total),
                  Fixed(total / 1e3, 1),
                  ShareInPercent(s.gemm.time_us, total),
                  ShareInPercent(s.attention.time_us, total),
                  ShareInPercent(s.other.time_us, total),
                  ShareInPercent(s.recompute.time_us, total),
                  ShareInPercent(s.tp_comm.time_us + s.dp_comm.time_us, total),
                  ShareInPercent(s.optimizer.time_us, total),
                  plain ? Fixed(row->tokens_per_s_per_gpu, 1)
                        : Grouped(static_cast<int64_t>(row->tokens_per_s_per_gpu)),
                  Fixed(row->model_flops_per_s_per_gpu / 1e12, 1),
                  Fixed(100 * row->mfu_peak, 1),
                  Fixed(100 * row->hfu_peak, 1),
                  Fixed(tuner::Gib(row->memory.total), 1),
                  std::string(tuner::SourceName(row->step_train.source)),
                  RunColumn(row->step_train.runs, row->step_train.pooled)});
  }
  return table;
}

nlohmann::json MemoryJson(const tuner::TrainingMemory& m) {
  return {{"total_gib", tuner::Gib(m.total)},
          {"fits", m.fits},
          {"capacity_gib", tuner::Gib(m.capacity)},
          {"weights_gib", tuner::Gib(m.weights)},
          {"gradients_gib", tuner::Gib(m.gradients)},
          {"optimizer_gib", tuner::Gib(m.optimizer)},
          {"activations_gib", tuner::Gib(m.activations)},
          {"logits_gib", tuner::Gib(m.logits)},
          {"reserve_gib", tuner::Gib(m.reserve)},
          {"source", "predicted"},
          {"model_version", tuner::kStepModelVersion}};
}

nlohmann::json StepJson(const tuner::DesignRow& row) {
  const tuner::StepBreakdown& s = row.step;
  return {{"time_us", s.total.time_us},
          {"source", tuner::SourceName(s.total.source)},
          {"micro_batches", s.micro_batches},
          {"tokens_per_gpu", row.tokens_per_step_per_gpu},
          {"gemm", TimingJson(s.gemm)},
          {"attention", TimingJson(s.attention)},
          {"other_kernels", TimingJson(s.other)},
          {"recompute", TimingJson(s.recompute)},
          {"tp_comm", TimingJson(s.tp_comm)},
          {"optimizer", TimingJson(s.optimizer)},
          {"dp_comm_exposed", TimingJson(s.dp_comm)},
          {"dp_comm_total_us", s.dp_comm_total_us},
          {"no_overlap_us", s.no_overlap_us}};
}

nlohmann::json ConfigJson(const tuner::DesignConfig& c) {
  const tuner::ModelConfig& m = c.model;
  const tuner::TrainingLayout& l = c.layout;
  return {{"hidden", m.hidden},
          {"heads", m.heads},
          {"kv_heads", m.KvHeads()},
          {"head_dim", m.HeadDim()},
          {"d_ff", m.d_ff},
          {"vocab", m.vocab},
          {"seq", m.seq},
          {"micro_batch", m.micro_batch},
          {"tp", m.tp},
          {"layers", c.layers},
          {"tied_embeddings", c.tied_embeddings},
          {"mlp", tuner::MlpName(c.mlp)},
          {"norm", tuner::NormName(c.norm)},
          {"rotary", c.rotary},
          {"dropout", c.dropout},
          {"dp", l.dp},
          {"zero", l.zero},
          {"grad_accum", l.grad_accum},
          {"gpus_per_node", l.gpus_per_node},
          {"recompute", tuner::RecomputeName(l.recompute)},
          {"grad_reduce", tuner::GradReduceName(l.grad_reduce_bytes)},
          {"backward_prefetch", tuner::BackwardPrefetchName(l.backward_prefetch)},
          {"global_batch", m.micro_batch * l.dp * l.grad_accum}};
}

nlohmann::json ParamsJson(const tuner::DesignParams& p) {
  return {{"total", p.total},
          {"per_layer", p.per_layer},
          {"embedding", p.embedding},
          {"per_tp_rank", p.per_rank},
          {"matmul", p.matmul}};
}

nlohmann::json RowJson(const tuner::DesignRow& row, int rank) {
  nlohmann::json j = {{"config", ConfigJson(row.config)}};
  if (!row.rule.ok()) {
    j["rule"] = std::string(row.rule.message());
    if (row.params.total > 0) j["params"] = ParamsJson(row.params);
    if (row.memory.total > 0) j["memory"] = MemoryJson(row.memory);
    return j;
  }
  j["rank"] = rank;
  j["tie_group"] = row.tie_group;
  j["source"] = tuner::SourceName(row.step_train.source);
  j["params"] = ParamsJson(row.params);
  j["memory"] = MemoryJson(row.memory);
  j["step"] = StepJson(row);
  j["fwd_flops_per_token"] = row.fwd_flops_per_token;
  j["train_flops_per_token"] = row.train_flops_per_token;
  j["model_flops_per_token"] = row.model_flops_per_token;
  j["hardware_flops_per_token"] = row.hardware_flops_per_token;
  j["layer_fwd"] = TimingJson(row.layer_fwd);
  j["layer_train"] = TimingJson(row.layer_train);
  j["attention_core_fwd"] = TimingJson(row.attention_core_fwd);
  j["attention_basis"] = row.attention_basis;
  j["logits_fwd"] = TimingJson(row.logits_fwd);
  j["logits_train"] = TimingJson(row.logits_train);
  j["step_train"] = TimingJson(row.step_train);
  j["comm_layer_train"] = TimingJson(row.comm_layer_train);
  j["comm_basis"] = row.comm_basis;
  j["dp_basis"] = row.dp_basis;
  j["tokens_per_s_per_gpu"] = row.tokens_per_s_per_gpu;
  j["tokens_per_s_per_gpu_no_overlap"] = row.tokens_per_s_per_gpu_no_overlap;
  j["model_flops_per_s_per_gpu"] = row.model_flops_per_s_per_gpu;
  j["mfu_peak"] = row.mfu_peak;
  j["hfu_peak"] = row.hfu_peak;
  j["warnings"] = row.warnings;
  return j;
}

std::string KindsOf(const DesignResult& r) {
  std::vector<tuner::Source> kinds;
  for (const tuner::DesignRow& row : r.rows) {
    if (row.rule.ok()) kinds.push_back(row.step_train.source);
  }
  return kinds.empty() ? "none" : CountKinds(kinds);
}

// What a design answer's intervals are, and are not.
constexpr const char* kStepIntervalNote =
    "an interval here is the step's: its parts' own intervals summed (GEMMs: the measured "
    "interval, or the GEMM predictor's expected error; the attention core its kernel's "
    "expected error, below; every other part +/-15%, assumed); it "
    "compares configurations under this model and is not a coverage interval for a real "
    "run's step (bench/design_vs_published.py measures how often published runs fall inside "
    "it; docs/design.md)";

// Where the shown rows' GEMM times come from: the GPU, software and clock
// policy of measured ones, the model (and calibration) of predicted ones.
std::string GemmSourceLines(const std::vector<const tuner::DesignRow*>& shown) {
  std::string measured, predicted;
  for (const tuner::DesignRow* row : shown) {
    const tuner::Timing& g = row->step.gemm;
    if (tuner::FromRuns(g.source) && measured.empty()) measured = g.provenance;
    if (g.source == tuner::Source::kPredicted && predicted.empty()) predicted = g.provenance;
  }
  std::string out;
  if (!measured.empty()) out += StrCat("GEMMs measured on: ", measured, "\n");
  if (!predicted.empty()) out += StrCat("GEMMs predicted by: ", predicted, "\n");
  return out;
}

// Every constant the step and memory models assume, with its source: what
// the answer prints under its table and in its JSON.
std::vector<std::string> Assumptions(const tuner::GpuSpec& gpu, tuner::DType dtype) {
  std::vector<std::string> out = {
      StrCat("memory-bound kernels (norms, activation, residuals, rotary, dropout, embedding, "
             "loss): bytes each reads and writes at ",
             Decimals(gpu.memory_bandwidth_gbs, 0), " GB/s HBM (datasheet) x ",
             Decimals(gpu.model.memory_efficiency, 2),
             " (the catalogue's achievable fraction, assumed) + ", Decimals(gpu.model.launch_us, 1),
             " us a kernel (the predictor's launch cost); one "
             "fused kernel per operation"),
      StrCat("optimizer: AdamW in mixed precision moves ", Decimals(tuner::kAdamBytesPerParam, 0),
             " bytes a parameter (counted from the algorithm) at the same bandwidth"),
      StrCat("tensor parallelism: ", tuner::kTpCommModelVersion,
             ", 4 ring collectives a layer (2 "
             "forward, 2 backward) on ",
             gpu.link, " at ", Decimals(gpu.link_gbs, 0), " GB/s x ",
             Decimals(tuner::kLinkEfficiency, 1),
             " (NCCL bus bandwidth, assumed), not overlapped; sequence parallelism assumed"),
      StrCat("data parallelism: ring collectives per ZeRO stage at the same efficiency, weights "
             "in bf16, gradients as --grad-reduce says (fp32 by default); within "
             "a node on ",
             gpu.link, ", across nodes at ", Decimals(tuner::InterNodeGbs(gpu), 1),
             " GB/s a GPU (DGX reference design; --inter-node-gbs), one ring per NIC rail so a "
             "node's NICs together, capped by the GPU's link, ",
             Decimals(tuner::kInterNodeLatencyUs, 0),
             " us a ring step (assumed); each layer's "
             "collectives run beside the next layer's compute, which loses the ",
             tuner::kCollectiveSms,
             " SMs a collective holds (an FSDP all-gather on an H100, NVIDIA developer forums "
             "2025; assumed)"),
      StrCat("memory: 16 bytes a parameter (Rajbhandari et al. 2020) sharded by tp and ZeRO; "
             "activations as Korthikanti et al. 2022 count them; logits with fp32 "
             "probabilities; reserve ",
             Decimals(tuner::kContextReserveGiB, 0),
             " GiB (CUDA context and workspaces, assumed) + ",
             Decimals(100 * tuner::kFragmentation, 0), "% (allocator, assumed); capacity ",
             Decimals(gpu.memory_gib, 0), " GiB (catalogue)"),
      "MFU = (6 x matmul weights + 12 x L x a x d x s) FLOPs a token x tokens/s / the datasheet "
      "dense peak (Chowdhery et al. 2022, app. B); HFU counts the FLOPs executed, recompute "
      "included; pipeline parallelism is not modelled",
  };
  if (const tuner::GemmCeiling c = tuner::ContinuousLoadCeiling(gpu, dtype); c.tflops > 0) {
    out.insert(out.begin(),
               StrCat("GEMMs under continuous load: a predicted GEMM runs no faster than ",
                      Decimals(c.tflops, 0), " TFLOP/s (", c.source,
                      "; docs/measurement.md); measured GEMMs as measured"));
  }
  return out;
}

// What the attention core's figures are, for the kernel the answer assumed.
std::string AttentionNote(const tuner::DesignOptions& o) {
  if (o.attention == tuner::AttentionKernel::kUnfused) {
    return "attention's core is timed as its two batched GEMMs (attn_score = Q*K^T, attn_value = "
           "P*V, one per head and sequence), writing the s*s scores (--attention unfused); "
           "fused kernels (FlashAttention), which training runs, never write them";
  }
  return StrCat("attention's core is one fused kernel (", tuner::AttentionFiguresNote(o.attention),
                ", whatever the GEMMs' source (--attention unfused: its two GEMMs)");
}

// The runs the shown rows' times come from, each once.
std::vector<tuner::RunInfo> RunsOf(const DesignResult& r) {
  std::vector<tuner::RunInfo> runs;
  for (const tuner::DesignRow* row : Shown(r)) tuner::MergeRuns(runs, row->step_train.runs);
  return runs;
}

}  // namespace

nlohmann::json Json(const DesignResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  int rank = 0;
  for (const tuner::DesignRow* row : Shown(r)) rows.push_back(RowJson(*row, ++rank));
  nlohmann::json broken = nlohmann::json::array();
  for (const tuner::DesignRow& row : r.rows) {
    if (!row.rule.ok()) broken.push_back(RowJson(row, 0));
  }
  const std::string_view rank_by = tuner::RankByName(tuner::RankByOf(r.rows));
  nlohmann::json doc = {
      {"schema_version", kJsonSchemaVersion},
      {"gpu", std::string(r.gpu.name)},
      {"dtype", std::string(tuner::DTypeName(r.dtype))},
      {"runs", RunsJson(RunsOf(r))},
      {"search", r.search.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.search)},
      {"peak_tflops", r.options.peak_tflops},
      {"rank_by", rank_by},
      {"ranking", StrCat("rank 1 is the headline best: the fastest of the first kind of "
                         "number there is (measured, mixed, predicted); that kind's rows "
                         "first, then the others, each listed tie group by tie group, by ",
                         rank_by)},
      {"step_model", tuner::kStepModelVersion},
      {"assumptions", Assumptions(r.gpu, r.dtype)},
      {"tie_rule", tuner::kTieRule},
      {"interval_note", kStepIntervalNote},
      {"attention", tuner::AttentionKernelName(r.options.attention)},
      {"attention_note", AttentionNote(r.options)},
      {"configs", rows},
      {"broken_rules", broken}};
  AddOriginJson(r.origin, doc);
  return doc;
}

Table Csv(const DesignResult& r) { return DesignTable(r, true); }

// The kinds and layout the configurations share (the CLI gives them once).
std::string LayoutLine(const DesignResult& r) {
  if (r.rows.empty()) return "";
  const tuner::DesignConfig& c = r.rows.front().config;
  const tuner::TrainingLayout& l = c.layout;
  return StrCat(tuner::MlpName(c.mlp), " MLP, ", tuner::NormName(c.norm),
                c.rotary ? ", rotary" : "", c.dropout ? ", dropout" : "", "; recompute ",
                tuner::RecomputeName(l.recompute), "; dp ", l.dp, " (ZeRO ", l.zero,
                ", gradients reduced in ", tuner::GradReduceName(l.grad_reduce_bytes),
                l.backward_prefetch == tuner::BackwardPrefetch::kPost
                    ? ", weights gathered in the backward after the gradients (post)"
                    : "",
                "), ", l.grad_accum, " micro-batch(es) a step, ", l.gpus_per_node, " GPUs a node");
}

void Text(const DesignResult& r, std::ostream& out) {
  size_t ranked = 0;
  for (const tuner::DesignRow& row : r.rows) ranked += row.rule.ok() ? 1U : 0U;
  const tuner::DesignRankBy by = tuner::RankByOf(r.rows);
  out << "model designs on " << r.gpu.name << ", " << tuner::DTypeName(r.dtype) << ": "
      << r.rows.size() << " configurations" << (r.search.empty() ? "" : " " + r.search) << ", "
      << ranked << " ranked (" << KindsOf(r) << "), " << r.rows.size() - ranked
      << " break a rule\nanswered by: " << r.origin.description << "\n"
      << LayoutLine(r)
      << "\nstep = one optimizer step on one GPU: grad-accum micro-batches (b*s tokens on each "
         "tensor-parallel group) forward and backward, every GEMM, the attention core, the "
         "memory-bound kernels, recompute, communication and the optimizer; every part but "
         "measured GEMMs PREDICTED ("
      << tuner::kStepModelVersion << ")\nranked by "
      << (by == tuner::DesignRankBy::kModelFlopsPerS
              ? "model FLOP/s per GPU (the configurations differ in size: equal work)"
              : "tokens/s per GPU (one size)")
      << "; MFU and HFU against the datasheet dense peak " << Fixed(r.options.peak_tflops, 1)
      << " TFLOP/s\n"
      << GemmSourceLines(Shown(r));
  if (const std::string runs = RunsLine(RunsOf(r), r.origin.options); !runs.empty()) {
    out << runs << "\n";
  }
  out << "\n";
  if (ranked > 0) DesignTable(r, false).Print(out);
  bool header = false;
  for (const tuner::DesignRow& row : r.rows) {
    if (row.rule.ok()) continue;
    if (!header) out << "\nnot ranked, each breaks a rule:\n";
    header = true;
    out << "  " << Config(row.config) << ": " << row.rule.message() << "\n";
  }
  header = false;
  for (const tuner::DesignRow* row : Shown(r)) {
    for (const std::string& w : row->warnings) {
      if (!header) out << "\nwarnings:\n";
      header = true;
      out << "  " << Config(row->config) << ": " << w << "\n";
    }
  }
  out << "\nRank 1 is the fastest of the first kind of number there is (measured, mixed, "
         "predicted). "
      << tuner::kTieRule << " (" << kStepIntervalNote
      << "). step_ms = one optimizer step; the % columns "
         "split it: GEMMs, attention core, other (memory-bound) kernels, recompute, comm "
         "(tensor-parallel + the data-parallel part compute does not hide), optimizer. "
         "mem_GiB = predicted memory per GPU. run = the sweep job measured GEMM times come "
         "from. "
      << AttentionNote(r.options) << ".\nAssumed (each a constant of " << tuner::kStepModelVersion
      << ", none fitted to a run):\n";
  for (const std::string& a : Assumptions(r.gpu, r.dtype)) out << "  - " << a << "\n";
}

}  // namespace crest::cli
