// One configuration `crest design` evaluates: a transformer's dimensions, the
// kinds of its layers, the parallel layout it trains in, and its parameter
// count. The step and memory models (training_step.h, training_memory.h)
// read it; design.h ranks it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "crest/tuner/model_config.h"
#include "crest/tuner/shapes.h"

namespace crest::tuner {

enum class NormKind {
  kRmsNorm,    // Llama, Mistral: a gain per feature
  kLayerNorm,  // GPT, MPT, BLOOM: gain and bias
};

// What the backward pass recomputes instead of storing (docs/design.md):
enum class Recompute {
  kNone,       // every activation the backward needs is stored
  kSelective,  // the attention core is re-run (Megatron's selective recompute)
  kFull,       // each layer's forward is re-run from its stored input
};

std::string_view MlpName(MlpKind mlp);           // "swiglu", "gelu"
std::string_view NormName(NormKind norm);        // "rmsnorm", "layernorm"
std::string_view RecomputeName(Recompute mode);  // "none", "selective", "full"
std::optional<MlpKind> ParseMlp(std::string_view text);
std::optional<NormKind> ParseNorm(std::string_view text);
std::optional<Recompute> ParseRecompute(std::string_view text);

// How a configuration trains beyond tensor parallelism (ModelConfig::tp).
// Data-parallel ranks each run a tensor-parallel group's share; pipeline
// parallelism is not modelled.
enum class BackwardPrefetch { kPre, kPost };

struct TrainingLayout {
  int64_t dp = 1;  // data-parallel ranks
  // ZeRO stage over the dp ranks (Rajbhandari et al. 2020): 0 none, 1 the
  // optimizer states sharded, 2 and the gradients, 3 and the weights (FSDP's
  // full shard).
  int zero = 0;
  int64_t grad_accum = 1;     // micro-batches per optimizer step
  int64_t gpus_per_node = 8;  // GPUs one NVLink domain joins; larger rings cross nodes
  Recompute recompute = Recompute::kNone;
  // Bandwidth between nodes per GPU and direction [GB/s]; 0: the default of
  // the GPU's architecture (training_step.h, InterNodeGbs).
  double inter_node_gbs = 0;
  // Bytes of a gradient element in data parallelism's all-reduces and
  // reduce-scatters: 4 (fp32, the default of Megatron-LM for bf16 training,
  // of torchtitan's FSDP2 and of Composer's DEFAULT mixed precision) or 2
  // (bf16, as Composer's PURE). Weights are gathered in 16 bits either way.
  int grad_reduce_bytes = 4;
  // FSDP's (ZeRO 3's) backward prefetch: when a layer's weights are gathered
  // in the backward. kPre (the default): before the previous layer's
  // gradients, so the gather and the gradients' reduce-scatter run beside
  // compute (PyTorch's BACKWARD_PRE; FSDP2 and torchtitan prefetch so).
  // kPost: after them (BACKWARD_POST, Composer's default): the gather is
  // queued behind the reduce-scatter on the one communicator and the layer
  // waits for both, so the backward's collectives are exposed in full.
  BackwardPrefetch backward_prefetch = BackwardPrefetch::kPre;
};

std::string_view GradReduceName(int bytes);                 // "fp32", "bf16"
std::optional<int> ParseGradReduce(std::string_view text);  // bytes; nullopt: unknown
std::string_view BackwardPrefetchName(BackwardPrefetch p);  // "pre", "post"
std::optional<BackwardPrefetch> ParseBackwardPrefetch(std::string_view text);

struct DesignConfig {
  ModelConfig model;
  int64_t layers = 0;
  bool tied_embeddings = false;  // the output layer reuses the embedding table
  MlpKind mlp = MlpKind::kSwiGlu;
  NormKind norm = NormKind::kRmsNorm;
  bool rotary = true;    // rotary position embedding on q and k (Llama); off: GPT, MPT
  bool dropout = false;  // dropout after attention and after the MLP (GPT-3); off in most
                         // pretraining today
  TrainingLayout layout;
};

// Parameters of one configuration (weights only; norm gains and biases
// included).
struct DesignParams {
  int64_t per_layer = 0;  // attention h·(a+2g)·d + a·d·h, MLP 3·h·f (GELU 2·h·f), two norms
  int64_t embedding = 0;  // v·h, and v·h again for an untied output layer
  int64_t total = 0;      // layers·per_layer + embedding + the final norm
  int64_t per_rank = 0;   // what one tensor-parallel rank holds (norms replicated)
  // Weights of every matrix multiply: each layer's attention and MLP, and
  // the output layer v·h (tied or not); the N of MFU's 6·N.
  int64_t matmul = 0;
};
DesignParams CountParams(const DesignConfig& config);

// OK, or InvalidArgument naming the first field out of range as the CLI
// spells it: dp (1..1048576), zero (0..3), grad-accum (1..65536),
// gpus-per-node (1..1024), inter-node-gbs (0..100000), grad-reduce (fp32
// or bf16), and tp·dp ≤ 2^24.
absl::Status ValidateLayout(const TrainingLayout& layout, int64_t tp);

}  // namespace crest::tuner
