// `crest design`: rank whole model configurations by training speed.
#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "answer_flags.h"
#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/design.h"
#include "crest/tuner/limits.h"
#include "crest/tuner/predictor.h"
#include "dim_list.h"
#include "printer.h"
#include "timed_results.h"

namespace crest::cli {
namespace {

struct DesignFlags {
  std::string hidden, heads, kv_heads, d_ff, vocab, seq, batch = "1", tp = "1", layers;
  std::string params, tolerance = "5%";
  bool tied = false;
  bool separate_gate_up = false;
  std::string attention = "fused";
  std::string mlp = "swiglu", norm = "rmsnorm", recompute = "none", grad_reduce = "fp32";
  std::string backward_prefetch = "pre";
  bool no_rotary = false;
  bool dropout = false;
  int64_t dp = 1, grad_accum = 1, gpus_per_node = 8;
  int zero = 0;
  double inter_node_gbs = 0;
  std::string dtype{tuner::kDefaultDtype};
  std::string gpu;
  int top = tuner::kDefaultTop;
  AnswerFlags answer;
};

// The usual choice when --d-ff is left out: SwiGLU 8/3·h rounded up to 256
// (as Llama 2), GELU 4·h.
// A hidden size past the limit is left as it is (0: no d_ff), for the
// configuration's own check to refuse by name; the products never overflow.
int64_t DefaultDff(int64_t h, tuner::MlpKind mlp) {
  if (h < 1 || h > tuner::kMaxHidden) return 0;
  return mlp == tuner::MlpKind::kGelu ? 4 * h : (h * 8 / 3 + 255) / 256 * 256;
}

// The kinds and layout every configuration shares, from the flags.
absl::StatusOr<tuner::DesignConfig> Shared(const DesignFlags& f) {
  tuner::DesignConfig c;
  c.tied_embeddings = f.tied;
  c.mlp = tuner::ParseMlp(f.mlp).value_or(tuner::MlpKind::kSwiGlu);  // CLI11 checks the names
  c.norm = tuner::ParseNorm(f.norm).value_or(tuner::NormKind::kRmsNorm);
  c.rotary = !f.no_rotary;
  c.dropout = f.dropout;
  c.layout.recompute = tuner::ParseRecompute(f.recompute).value_or(tuner::Recompute::kNone);
  c.layout.dp = f.dp;
  c.layout.zero = f.zero;
  c.layout.grad_accum = f.grad_accum;
  c.layout.gpus_per_node = f.gpus_per_node;
  c.layout.inter_node_gbs = f.inter_node_gbs;
  c.layout.grad_reduce_bytes = tuner::ParseGradReduce(f.grad_reduce).value_or(4);  // CLI11 checks
  c.layout.backward_prefetch =
      tuner::ParseBackwardPrefetch(f.backward_prefetch).value_or(tuner::BackwardPrefetch::kPre);
  if (auto s = tuner::ValidateLayout(c.layout, 1); !s.ok()) return s;  // tp·dp: per configuration
  return c;
}

// --batch max: each configuration at the largest micro-batch that fits.
bool BatchMax(const DesignFlags& f) { return f.batch == "max"; }

struct Dims {
  std::vector<int64_t> hidden, heads, kv_heads, d_ff, vocab, seq, batch, tp, layers;
};

absl::Status ParseDims(const DesignFlags& f, Dims& d) {
  const std::pair<const char*, std::pair<const std::string*, std::vector<int64_t>*>> fields[] = {
      {"hidden", {&f.hidden, &d.hidden}},       {"heads", {&f.heads, &d.heads}},
      {"kv-heads", {&f.kv_heads, &d.kv_heads}}, {"d-ff", {&f.d_ff, &d.d_ff}},
      {"vocab", {&f.vocab, &d.vocab}},          {"seq", {&f.seq, &d.seq}},
      {"batch", {&f.batch, &d.batch}},          {"tp", {&f.tp, &d.tp}},
      {"layers", {&f.layers, &d.layers}}};
  for (const auto& [name, field] : fields) {
    if (field.first->empty()) continue;
    if (field.second == &d.batch && BatchMax(f)) {
      d.batch = {1};  // each configuration's own is found later
      continue;
    }
    auto values = ParseDimList(name, *field.first);
    if (!values.ok()) return values.status();
    *field.second = *std::move(values);
  }
  return absl::OkStatus();
}

absl::Status Require(const std::vector<int64_t>& v, const char* field, const char* why) {
  if (!v.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(field, ": give --", field, " ", why));
}

// Every combination of the explicit dimensions.
absl::StatusOr<std::vector<tuner::DesignConfig>> Combinations(const Dims& d, tuner::DType dtype,
                                                              const tuner::DesignConfig& shared) {
  for (auto [v, name] : {std::pair{&d.hidden, "hidden"},
                         {&d.heads, "heads"},
                         {&d.vocab, "vocab"},
                         {&d.seq, "seq"},
                         {&d.layers, "layers"}}) {
    if (auto s = Require(*v, name, "(or --params to search)"); !s.ok()) return s;
  }
  std::vector<tuner::DesignConfig> out;
  double count = 1;
  for (const auto* v :
       {&d.hidden, &d.heads, &d.kv_heads, &d.d_ff, &d.vocab, &d.seq, &d.batch, &d.tp, &d.layers}) {
    count *= static_cast<double>(std::max<size_t>(1, v->size()));
  }
  if (count > static_cast<double>(tuner::kMaxDesignConfigs)) {
    return absl::InvalidArgumentError(StrCat(
        "the dimensions give ", count, " configurations; at most ", tuner::kMaxDesignConfigs));
  }
  const std::vector<int64_t> none = {0};
  for (int64_t h : d.hidden)
    for (int64_t a : d.heads)
      for (int64_t g : d.kv_heads.empty() ? none : d.kv_heads)
        for (int64_t f : d.d_ff.empty() ? none : d.d_ff)
          for (int64_t v : d.vocab)
            for (int64_t s : d.seq)
              for (int64_t b : d.batch)
                for (int64_t t : d.tp)
                  for (int64_t layers : d.layers) {
                    tuner::DesignConfig c = shared;
                    c.model = {h, a, g, f == 0 ? DefaultDff(h, shared.mlp) : f, v, s, b, t, dtype};
                    c.layers = layers;
                    out.push_back(c);
                  }
  return out;
}

// The d_ff values a --params search tries for a width and ratio: of the d_ff
// answer's best tie group (training, the search's tokens and tp), the three
// with the largest power-of-two factor, nearest the ratio first.
tuner::DffChooser BestTieGroup(answers::Answers& answers, const tuner::GpuSpec& gpu,
                               const tuner::ModelConfig& base) {
  return [&answers, &gpu, base](int64_t hidden,
                                const tuner::Ratio& ratio) -> absl::StatusOr<std::vector<int64_t>> {
    tuner::DffQuery q;
    q.dff.hidden = hidden;
    q.dff.ratio = ratio;
    q.dff.tp = base.tp;
    q.tokens = base.Tokens();
    q.dtype = base.dtype;
    q.train = true;
    q.top = 0;
    auto ranking = answers.Dff(q, gpu);
    if (!ranking.ok()) return ranking.status();
    std::vector<int64_t> group;
    for (const tuner::DffRow& row : ranking->rows) {
      if (row.tie_group == 1 && row.source == ranking->headline) group.push_back(row.d_ff);
    }
    const double target = ratio.Value() * static_cast<double>(hidden);
    const auto key = [target](int64_t d) {
      return std::pair(-(d & -d), std::abs(static_cast<double>(d) - target));
    };
    std::sort(group.begin(), group.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
    if (group.size() > 3) group.resize(3);
    return group;
  };
}

absl::StatusOr<std::vector<tuner::DesignConfig>> Configs(const DesignFlags& f, tuner::DType dtype,
                                                         answers::Answers& answers,
                                                         const tuner::GpuSpec& gpu) {
  Dims d;
  if (auto s = ParseDims(f, d); !s.ok()) return s;
  auto shared = Shared(f);
  if (!shared.ok()) return shared.status();
  if (f.params.empty()) return Combinations(d, dtype, *shared);
  for (auto [v, name] : {std::pair{&d.hidden, "hidden"},
                         {&d.heads, "heads"},
                         {&d.kv_heads, "kv-heads"},
                         {&d.d_ff, "d-ff"},
                         {&d.layers, "layers"}}) {
    if (!v->empty()) {
      return absl::InvalidArgumentError(StrCat(name, ": --params searches it; leave out --", name));
    }
  }
  for (auto [v, name] :
       {std::pair{&d.vocab, "vocab"}, {&d.seq, "seq"}, {&d.batch, "batch"}, {&d.tp, "tp"}}) {
    if (v->size() > 1) {
      return absl::InvalidArgumentError(StrCat(name, ": one value with --params"));
    }
  }
  if (auto s = Require(d.vocab, "vocab", "with --params"); !s.ok()) return s;
  if (auto s = Require(d.seq, "seq", "with --params"); !s.ok()) return s;
  tuner::DesignSearch search;
  auto params = ParseCount("params", f.params);
  if (!params.ok()) return params.status();
  auto tolerance = ParseFraction("tolerance", f.tolerance);
  if (!tolerance.ok()) return tolerance.status();
  search.params = *params;
  search.tolerance = *tolerance;
  search.base = *shared;
  search.base.model = {0, 0, 0, 0, d.vocab[0], d.seq[0], d.batch[0], d.tp[0], dtype};
  if (d.tp[0] < 1 || d.seq[0] < 1 || d.batch[0] < 1) {
    return absl::InvalidArgumentError("seq, batch and tp must be positive");
  }
  search.choose_dff = BestTieGroup(answers, gpu, search.base.model);
  return tuner::SearchDesigns(search);
}

absl::Status RunDesign(const DesignFlags& f, Io& io) {
  auto gpu = tuner::FindGpu(f.gpu);
  if (!gpu.ok()) return gpu.status();
  auto dtype = tuner::ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  if (auto s = tuner::CheckDtypePath(**gpu, *dtype); !s.ok()) return s;
  if (f.top < 0) return absl::InvalidArgumentError("top must be 0 (all) or more");
  auto answers = OpenAnswers(f.answer);
  if (!answers.ok()) return answers.status();
  auto configs = Configs(f, *dtype, **answers, **gpu);
  if (!configs.ok()) return configs.status();
  if (configs->empty()) {
    return absl::FailedPreconditionError(StrCat(
        "no configuration lies within ", f.tolerance, " of ", f.params,
        " parameters under the search's rules (see `crest design --help`); widen --tolerance"));
  }
  tuner::DesignOptions options;
  options.fuse_gate_up = !f.separate_gate_up;
  // CLI11 checks the names.
  options.attention =
      tuner::ParseAttentionKernel(f.attention).value_or(tuner::AttentionKernel::kFused);
  options.peak_tflops = (*gpu)->PeakTflops(*dtype);
  if (BatchMax(f)) {
    for (tuner::DesignConfig& c : *configs) {
      // None fits: kept at 1, where the memory rule says by how much.
      c.model.micro_batch =
          std::max<int64_t>(1, tuner::LargestFittingBatch(c, **gpu, options.attention));
    }
  }
  auto rows = (*answers)->Design(*configs, options, **gpu);
  if (!rows.ok()) return rows.status();
  std::string search =
      f.params.empty() ? ""
                       : StrCat("searched near ", f.params, " parameters (+/-", f.tolerance, ")");
  if (BatchMax(f)) {
    search +=
        StrCat(search.empty() ? "" : ", ", "each at the largest micro-batch that fits (at most ",
               tuner::kMaxBatchSearched, ")");
  }
  const bool none_ranked = std::none_of(rows->begin(), rows->end(),
                                        [](const tuner::DesignRow& r) { return r.rule.ok(); });
  const size_t configs_given = rows->size();
  PrinterFor(io)->Print(
      DesignResult{**gpu, *dtype, options, *std::move(rows), search, f.top, (*answers)->origin()});
  if (none_ranked) {
    return absl::InvalidArgumentError(
        StrCat("every one of the ", configs_given,
               " configurations breaks a rule (each is listed with its rule); nothing is ranked"));
  }
  return absl::OkStatus();
}

}  // namespace

Command RegisterDesign(CLI::App& root) {
  auto flags = std::make_shared<DesignFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "design",
      "Predict a training step per GPU for whole model configurations and rank them: every "
      "GEMM (measured where the database has one run covering them), the fused attention core, "
      "the memory-bound kernels, the optimizer, recompute and tensor- and data-parallel "
      "communication; memory per GPU (a configuration that does not fit breaks a rule); "
      "tokens/s per GPU, MFU and HFU against the datasheet peak. Ranked by tokens/s per GPU, or "
      "by model FLOP/s per GPU when the configurations differ in size. Each dimension takes a "
      "value (4096), a list (4096,5120) or a range FROM:TO:STEP; or --params searches near a "
      "parameter budget. docs/design.md says what each part assumes");
  CLI::App& app = *cmd.app;
  AddOption(app, "--hidden", flags->hidden, "hidden size h");
  AddOption(app, "--heads", flags->heads, "attention heads a");
  AddOption(app, "--kv-heads", flags->kv_heads, "key/value heads g (default: = heads)");
  AddOption(app, "--d-ff", flags->d_ff,
            "MLP inner size f (default: SwiGLU 8/3*h rounded up to 256, GELU 4*h)");
  AddOption(app, "--vocab", flags->vocab, "vocabulary size v (used as given; see `crest vocab`)");
  AddOption(app, "--seq", flags->seq, "sequence length s");
  AddOption(app, "--batch", flags->batch,
            "micro-batch b (sequences per GPU), or max: the largest that fits in memory")
      .ShowDefault();
  AddOption(app, "--tp", flags->tp, "tensor-parallel degree t").ShowDefault();
  AddOption(app, "--layers", flags->layers, "layers L");
  AddOption(app, "--params", flags->params,
            "search near this many parameters (7e9, 7B): h a multiple of 128 with "
            "64 <= h/L <= 192, head dim 64/128/256, kv-heads = heads or 8, d_ff/h near 8/3, "
            "3.5 and 4 (for each, up to three d_ff of the d_ff answer's tie group 1 at the "
            "search's tokens and tp, the largest power-of-two factor first, then nearest "
            "the ratio; GELU: 4*h), vocab padded to 128*tp, every L that lands within "
            "--tolerance; give --vocab and --seq");
  AddOption(app, "--tolerance", flags->tolerance, "with --params: within this of the budget")
      .ShowDefault();
  AddFlag(app, "--tied-embeddings", flags->tied, "the output layer shares the embedding table");
  AddOption(app, "--mlp", flags->mlp, "the MLP: swiglu (gate, up, down) or gelu (up, down)")
      .OneOf({"swiglu", "gelu"})
      .ShowDefault();
  AddOption(app, "--norm", flags->norm, "the norms: rmsnorm or layernorm")
      .OneOf({"rmsnorm", "layernorm"})
      .ShowDefault();
  AddFlag(app, "--no-rotary", flags->no_rotary,
          "no rotary embedding on q and k (GPT's learned positions, MPT's ALiBi)");
  AddFlag(app, "--dropout", flags->dropout, "dropout after attention and after the MLP");
  AddOption(app, "--recompute", flags->recompute,
            "activation recompute: none, selective (the attention core re-runs in the "
            "backward) or full (each layer's forward re-runs)")
      .OneOf({"none", "selective", "full"})
      .ShowDefault();
  AddOption(app, "--dp", flags->dp, "data-parallel ranks (each runs a tensor-parallel group)")
      .ShowDefault();
  AddOption(app, "--zero", flags->zero,
            "ZeRO stage over dp: 0 none, 1 optimizer states sharded, 2 and gradients, "
            "3 and weights (FSDP full shard)")
      .ShowDefault();
  AddOption(app, "--grad-accum", flags->grad_accum,
            "micro-batches per optimizer step (global batch = b*dp*grad-accum sequences)")
      .ShowDefault();
  AddOption(app, "--gpus-per-node", flags->gpus_per_node,
            "GPUs one NVLink domain joins; data-parallel rings over more cross nodes")
      .ShowDefault();
  AddOption(app, "--inter-node-gbs", flags->inter_node_gbs,
            "bandwidth between nodes per GPU and direction [GB/s] (default: the DGX "
            "reference design of the GPU's architecture: 25 Ampere, 50 Hopper/Blackwell)");
  AddOption(app, "--grad-reduce", flags->grad_reduce,
            "the dtype data parallelism reduces gradients in: fp32 (Megatron-LM's default "
            "for bf16, torchtitan's, Composer's DEFAULT mixed precision) or bf16")
      .OneOf({"fp32", "bf16"})
      .ShowDefault();
  AddOption(app, "--backward-prefetch", flags->backward_prefetch,
            "with --zero 3: when FSDP gathers a layer's weights in the backward: pre "
            "(before the previous layer's gradients, beside compute: BACKWARD_PRE, FSDP2, "
            "torchtitan) or post (after them, behind their reduce-scatter: BACKWARD_POST, "
            "Composer's default; the backward's collectives exposed)")
      .OneOf({"pre", "post"})
      .ShowDefault();
  AddFlag(app, "--separate-gate-up", flags->separate_gate_up,
          "SwiGLU gate and up as two GEMMs (default: one fused GEMM)");
  AddOption(app, "--attention", flags->attention,
            "the attention core: fused (one FlashAttention kernel, predicted from published "
            "figures, causal: FlashAttention-3 on Hopper, -2 elsewhere), fused-fa2 "
            "(FlashAttention-2 on every GPU, as Hopper runs before FA3), fused-triton (the "
            "2022 Triton FlashAttention, llm-foundry's attn_impl triton: half "
            "FlashAttention-2's throughput) or unfused (its two batched GEMMs, writing the "
            "s*s scores)")
      .OneOf({"fused", "fused-fa2", "fused-triton", "unfused"})
      .ShowDefault();
  AddOption(app, "--dtype", flags->dtype, kDtypeHelp).ShowDefault();
  AddOption(app, "--gpu", flags->gpu, "catalogued GPU (see `crest gpus`)").Required();
  AddOption(app, "--top", flags->top, "rows of each kind to show (0 = all)").ShowDefault();
  AddAnswerFlags(app, flags->answer);
  cmd.run = [flags](Io& io) { return RunDesign(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
