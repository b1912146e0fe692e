// The training step's parts beyond the GEMMs and its memory per GPU, on
// hand-computed cases (training_step.h, training_memory.h, design.h).
#include "crest/tuner/training_step.h"

#include <cmath>

#include "crest/tuner/design.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/timing_ops.h"
#include "crest/tuner/training_memory.h"
#include "gtest/gtest.h"

namespace crest::tuner {
namespace {

constexpr double kTh =
    4096.0 * 4096;  // Llama 2 7B: tokens × hidden of one micro-batch (b 1, s 4096)
constexpr double kTf = 4096.0 * 11008;  // tokens × d_ff

DesignConfig Llama7BOnOneGpu() {
  DesignConfig c;
  c.model = {4096, 32, 0, 11008, 32000, 4096, 1, 1, DType::kBf16};
  c.layers = 32;
  return c;
}

// A GPT-3-style layer as Korthikanti et al. (2022) count it: LayerNorm, GELU
// MLP of 4h, dropout, learned positions, no tensor parallelism.
DesignConfig GptLayer() {
  DesignConfig c;
  c.model = {4096, 32, 0, 16384, 51200, 2048, 1, 1, DType::kBf16};
  c.layers = 1;
  c.mlp = MlpKind::kGelu;
  c.norm = NormKind::kLayerNorm;
  c.rotary = false;
  c.dropout = true;
  return c;
}

const GpuSpec& H100() { return **FindGpu("h100"); }

TEST(TrainingStep, LayerKernelsMoveTheBytesEachReadsAndWrites) {
  const KernelTraffic k = LayerKernelTraffic(Llama7BOnOneGpu());
  // Forward: two norms (2 a norm), two residual adds (3 each), SwiGLU (read
  // gate and up, write one: 3·T·f), rotary on q and k (T·8192 each way), bf16.
  const double qk = 4096.0 * 8192;
  EXPECT_DOUBLE_EQ(k.fwd_bytes, 2 * (2 * 2 * kTh + 2 * 3 * kTh + 3 * kTf + 2 * qk));
  EXPECT_DOUBLE_EQ(k.fwd_bytes, 740294656.0);
  // Backward: norms 3 each, residual gradient sums 3 each, SwiGLU 5, rotary 2.
  EXPECT_DOUBLE_EQ(k.bwd_bytes, 987758592.0);
  EXPECT_EQ(k.fwd_kernels, 6);
  EXPECT_EQ(k.bwd_kernels, 6);
  DesignConfig gelu = Llama7BOnOneGpu();
  gelu.mlp = MlpKind::kGelu;
  gelu.rotary = false;
  EXPECT_DOUBLE_EQ(LayerKernelTraffic(gelu).fwd_bytes, 2 * (10 * kTh + 2 * kTf))
      << "GELU reads and writes one intermediate; no rotary";
  DesignConfig tp = Llama7BOnOneGpu();
  tp.model.tp = 4;
  EXPECT_DOUBLE_EQ(LayerKernelTraffic(tp).fwd_bytes, 740294656.0 / 4)
      << "sequence parallelism: every kernel runs on its quarter";
}

TEST(TrainingStep, MemoryBoundTimeIsBytesAtTheCataloguesBandwidthPlusLaunches) {
  const Timing t = MemoryBoundTiming(2.8475e9, 3, H100());
  // 3350 GB/s × 0.85 = 2.8475e6 bytes a µs: 1000 µs, + 3 × 2.5 µs.
  EXPECT_NEAR(t.time_us, 1000 + 7.5, 1e-9);
  EXPECT_EQ(t.source, Source::kPredicted);
  EXPECT_EQ(t.provenance, kStepModelVersion);
}

TEST(TrainingStep, AdamMoves28BytesAParameterOfThisGpusShard) {
  DesignConfig c = Llama7BOnOneGpu();
  const DesignParams p = CountParams(c);
  const double bw = 3350e3 * 0.85;  // bytes a µs
  EXPECT_NEAR(OptimizerTiming(c, p, H100()).time_us, 6738415616.0 * 28 / bw + 2.5, 1e-3);
  c.layout.dp = 8;
  EXPECT_NEAR(OptimizerTiming(c, p, H100()).time_us, 6738415616.0 * 28 / bw + 2.5, 1e-3)
      << "ZeRO 0: every rank updates every parameter";
  c.layout.zero = 1;
  EXPECT_NEAR(OptimizerTiming(c, p, H100()).time_us, 6738415616.0 / 8 * 28 / bw + 2.5, 1e-3);
}

TEST(TrainingStep, DataParallelCollectivesFollowTheZeroStage) {
  DesignConfig c = Llama7BOnOneGpu();
  c.layout.dp = 8;
  const DesignParams p = CountParams(c);
  // One layer's bf16 weights: 2 × 202,383,360 bytes; a ring over 8 GPUs
  // moves 7/8 of them at 450 GB/s × 0.8, 7 steps of 3 µs. Its fp32
  // gradients (the default) are twice the bytes.
  const double weights = 7.0 / 8 * 2 * 202383360.0 / (450e3 * 0.8) + 7 * 3.0;
  const double grads = 7.0 / 8 * 4 * 202383360.0 / (450e3 * 0.8) + 7 * 3.0;
  auto zero0 = PredictDpComm(c, p, H100());
  ASSERT_TRUE(zero0.ok()) << zero0.status();
  EXPECT_NEAR(zero0->layer_bwd_us, 2 * grads, 1e-6) << "an all-reduce is two rings";
  EXPECT_EQ(zero0->layer_fwd_us, 0);
  EXPECT_EQ(zero0->bwd_micro_batches, 1);
  EXPECT_NE(zero0->basis.find("gradients in fp32"), std::string::npos) << zero0->basis;
  c.layout.zero = 3;
  c.layout.grad_accum = 4;
  auto zero3 = PredictDpComm(c, p, H100());
  ASSERT_TRUE(zero3.ok());
  EXPECT_NEAR(zero3->layer_fwd_us, weights, 1e-6);
  EXPECT_NEAR(zero3->layer_bwd_us, weights + grads, 1e-6) << "gather again, and reduce-scatter";
  EXPECT_EQ(zero3->fwd_micro_batches, 4) << "FSDP communicates in every micro-batch";
  EXPECT_NEAR(zero3->total_us, 32 * 4 * (2 * weights + grads) + zero3->rest_us, 1e-3);
  c.layout.grad_reduce_bytes = 2;
  auto bf16 = PredictDpComm(c, p, H100());
  ASSERT_TRUE(bf16.ok());
  EXPECT_NEAR(bf16->layer_bwd_us, 2 * weights, 1e-6) << "bf16 gradients move the weights' bytes";
  // Past one node NCCL runs a ring per NIC rail: the node's 8 NICs of 50 GB/s
  // together, capped by the GPU's own NVLink (450 GB/s).
  c.layout.dp = 16;
  auto nodes = PredictDpComm(c, p, H100());
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->link_gbs, 400);
  EXPECT_NE(nodes->basis.find("across nodes"), std::string::npos) << nodes->basis;
  c.model.tp = 4;  // 4 data-parallel groups share a node's NICs
  auto tp4 = PredictDpComm(c, CountParams(c), H100());
  ASSERT_TRUE(tp4.ok());
  EXPECT_EQ(tp4->link_gbs, 100);
  c.model.tp = 1;
  c.layout.inter_node_gbs = 100;
  EXPECT_EQ(PredictDpComm(c, p, H100())->link_gbs, 450) << "NVLink caps a fast network";
  c.layout.dp = 1;
  EXPECT_EQ(PredictDpComm(c, p, H100())->total_us, 0);
}

TEST(TrainingStep, GradientsReduceInFp32OrBf16AndNothingElse) {
  TrainingLayout l;
  EXPECT_EQ(l.grad_reduce_bytes, 4) << "fp32 by default, as Megatron-LM, torchtitan, Composer";
  EXPECT_EQ(ParseGradReduce("bf16"), 2);
  EXPECT_EQ(ParseGradReduce("fp32"), 4);
  EXPECT_FALSE(ParseGradReduce("fp16").has_value());
  EXPECT_EQ(GradReduceName(2), "bf16");
  l.grad_reduce_bytes = 3;
  const absl::Status s = ValidateLayout(l, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("grad-reduce"), std::string::npos) << s.message();
}

TEST(TrainingStep, ExposedCommunicationIsTheFirstLayersAndWhatComputeCannotHideOrLoses) {
  EXPECT_EQ(ExposedComm(100, 300, 32, 0), 100) << "hidden behind each next layer but the first";
  EXPECT_EQ(ExposedComm(500, 300, 32, 0), 500 + 31 * 200.0);
  EXPECT_EQ(ExposedComm(0, 300, 32, 0.2), 0);
  // Beside compute a collective holds a fifth of the SMs: each hidden
  // layer's compute loses 100 × 0.2 µs.
  EXPECT_DOUBLE_EQ(ExposedComm(100, 300, 32, 0.2), 100 + 31 * 20.0);
  EXPECT_DOUBLE_EQ(ExposedComm(500, 300, 32, 0.2), 500 + 31 * 200.0)
      << "what compute cannot hide already counts the slower compute";
  EXPECT_DOUBLE_EQ(CollectiveShare(H100()), 24.0 / 132);
  EXPECT_DOUBLE_EQ(CollectiveShare(**FindGpu("a100")), 24.0 / 108);
}

TEST(TrainingStep, PredictedGemmsAreHeldToTheContinuousLoadRateMeasuredOnAnH100) {
  const GemmCeiling h100 = ContinuousLoadCeiling(H100(), DType::kBf16);
  EXPECT_EQ(h100.tflops, 655);
  EXPECT_NE(h100.source.find("643-668"), std::string::npos) << h100.source;
  EXPECT_EQ(ContinuousLoadCeiling(**FindGpu("h200"), DType::kFp16).tflops, 655)
      << "the same die at the same 700 W";
  EXPECT_NE(ContinuousLoadCeiling(**FindGpu("h200"), DType::kBf16).source.find("assumed"),
            std::string::npos);
  EXPECT_EQ(ContinuousLoadCeiling(**FindGpu("h100pcie"), DType::kBf16).tflops, 0)
      << "a 350 W part: nothing measured";
  EXPECT_EQ(ContinuousLoadCeiling(**FindGpu("a100"), DType::kBf16).tflops, 0);
  EXPECT_EQ(ContinuousLoadCeiling(H100(), DType::kFp8E4M3).tflops, 0);
  // 2·8192·21888·4096 FLOPs: 1990.6 µs predicted (738 TFLOP/s) becomes
  // the FLOPs at 655 TFLOP/s, its interval scaled alike.
  const double flops = 2.0 * 8192 * 21888 * 4096;
  Timing fast = PredictedTiming(1990.6, 0.1, "m");
  const Timing held = HeldToCeiling(fast, flops, h100);
  EXPECT_DOUBLE_EQ(held.time_us, flops / 655e6);
  EXPECT_DOUBLE_EQ(held.high_us / held.time_us, fast.high_us / fast.time_us);
  Timing slow = PredictedTiming(5000, 0.1, "m");
  EXPECT_EQ(HeldToCeiling(slow, flops, h100).time_us, 5000) << "below the ceiling: unchanged";
  Timing measured = MeasuredTiming(1990.6, 1980, 2000);
  EXPECT_EQ(HeldToCeiling(measured, flops, h100).time_us, 1990.6) << "measured stays measured";
}

TEST(TrainingMemory, AGptLayerKeeps34SbhPlus5As2bAsKorthikantiCountsIt) {
  const DesignConfig c = GptLayer();
  const double sbh = 2048.0 * 4096;
  const double as2b = 32.0 * 2048 * 2048;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c, AttentionKernel::kUnfused, Recompute::kNone),
                   34 * sbh + 5 * as2b);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c, AttentionKernel::kUnfused, Recompute::kSelective),
                   34 * sbh)
      << "selective recompute drops the s^2 terms";
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c, AttentionKernel::kUnfused, Recompute::kFull), 2 * sbh);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c, AttentionKernel::kFused, Recompute::kNone),
                   34 * sbh + 4.0 * 2048 * 32)
      << "fused: a log-sum-exp per row, no scores";
  DesignConfig tp = c;
  tp.model.tp = 8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(tp, AttentionKernel::kUnfused, Recompute::kNone),
                   (34 * sbh + 5 * as2b) / 8)
      << "tensor and sequence parallel: all of it / t";
}

TEST(TrainingMemory, Llama7BOnEightGpusWithZero3) {
  DesignConfig c = Llama7BOnOneGpu();
  c.layout.dp = 8;
  c.layout.zero = 3;
  const DesignParams p = CountParams(c);
  const TrainingMemory m = PredictTrainingMemory(c, p, H100(), AttentionKernel::kFused);
  const double params = 6738415616.0;
  EXPECT_DOUBLE_EQ(m.weights, 2 * params / 8 + 2 * 2 * 202383360.0) << "+ two gathered layers";
  EXPECT_DOUBLE_EQ(m.gradients, 2 * params / 8);
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * params / 8);
  // A layer: norm inputs and GEMM inputs 4·Th·2 bytes, q k v 6·Th... (MHA),
  // attention output 2·Th, SwiGLU 6·T·f, log-sum-exp 4·T·a.
  const double layer = 16 * kTh + 6 * kTf + 4.0 * 4096 * 32;
  EXPECT_DOUBLE_EQ(layer, 539492352.0);
  EXPECT_DOUBLE_EQ(m.activations, 32 * layer + 2 * kTh) << "+ the final norm's input";
  EXPECT_DOUBLE_EQ(m.logits, 6.0 * 4096 * 32000) << "bf16 logits and fp32 probabilities";
  const double held = m.weights + m.gradients + m.optimizer + m.activations + m.logits;
  EXPECT_DOUBLE_EQ(m.reserve, kGiB + 0.05 * held);
  EXPECT_DOUBLE_EQ(m.total, held + m.reserve);
  EXPECT_DOUBLE_EQ(m.capacity, 80 * kGiB);
  EXPECT_TRUE(m.fits);
  c.layout.recompute = Recompute::kFull;
  const TrainingMemory full = PredictTrainingMemory(c, p, H100(), AttentionKernel::kFused);
  EXPECT_DOUBLE_EQ(full.activations, 32 * 2 * kTh + 2 * kTh + layer)
      << "each layer's input, and one layer re-run";
}

TEST(TrainingMemory, SevenBOnOneGpuAnd70BAtTp1AreRefusedWithTheirFigures) {
  DesignOptions o;
  o.gpu = &H100();
  o.peak_tflops = 989.4;
  auto row = EvaluateDesign(Llama7BOnOneGpu(), o, EachGemm(PredictorTimer(H100())));
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->rule.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(row->rule.message().find("needs 124.1 GiB of H100-SXM's 80.0 GiB per GPU"),
            std::string::npos)
      << row->rule.message();
  EXPECT_NE(row->rule.message().find("--zero"), std::string::npos) << "says what would help";
  DesignConfig llama70 = Llama7BOnOneGpu();
  llama70.model = {8192, 64, 8, 28672, 32000, 4096, 1, 1, DType::kBf16};
  llama70.layers = 80;
  llama70.layout.dp = 64;
  llama70.layout.zero = 3;
  row = EvaluateDesign(llama70, o, EachGemm(PredictorTimer(H100())));
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->rule.ok()) << "80 layers' activations at s 4096 do not fit without recompute";
  EXPECT_GT(row->memory.activations, 80 * kGiB);
  llama70.layout.recompute = Recompute::kFull;
  row = EvaluateDesign(llama70, o, EachGemm(PredictorTimer(H100())));
  ASSERT_TRUE(row.ok());
  EXPECT_TRUE(row->rule.ok()) << row->rule;
}

TEST(TrainingMemory, LargestFittingBatchFitsAndOneMoreDoesNot) {
  DesignConfig c = Llama7BOnOneGpu();
  c.layout.dp = 8;
  c.layout.zero = 3;
  const int64_t b = LargestFittingBatch(c, H100(), AttentionKernel::kFused);
  ASSERT_GT(b, 1);
  const auto total = [&](int64_t batch) {
    c.model.micro_batch = batch;
    return PredictTrainingMemory(c, CountParams(c), H100(), AttentionKernel::kFused).total;
  };
  EXPECT_LE(total(b), 80 * kGiB);
  EXPECT_GT(total(b + 1), 80 * kGiB);
  c.layout.dp = 1;
  c.layout.zero = 0;
  c.model.micro_batch = 1;
  EXPECT_EQ(LargestFittingBatch(c, H100(), AttentionKernel::kFused), 0) << "none fits";
}

TEST(TrainingStep, RecomputeAddsTheForwardItReRunsAndHfuCountsIt) {
  DesignConfig c = Llama7BOnOneGpu();
  c.layout.dp = 8;
  c.layout.zero = 3;
  DesignOptions o;
  o.gpu = &H100();
  o.peak_tflops = 989.4;
  const GemmSetTimer timer = EachGemm(PredictorTimer(H100()));
  const auto at = [&](Recompute mode) {
    c.layout.recompute = mode;
    auto row = EvaluateDesign(c, o, timer);
    EXPECT_TRUE(row.ok() && row->rule.ok());
    return *row;
  };
  const DesignRow none = at(Recompute::kNone);
  const DesignRow selective = at(Recompute::kSelective);
  const DesignRow full = at(Recompute::kFull);
  EXPECT_NEAR(selective.step.recompute.time_us, 32 * none.attention_core_fwd.time_us, 1e-6);
  EXPECT_GT(full.step.recompute.time_us, 32 * none.layer_fwd.time_us)
      << "the layer's GEMMs and attention, and its memory-bound kernels";
  EXPECT_GT(none.mfu_peak, selective.mfu_peak);
  EXPECT_GT(full.hfu_peak, full.mfu_peak) << "HFU counts the re-run forward";
  EXPECT_DOUBLE_EQ(none.model_flops_per_token, full.model_flops_per_token)
      << "MFU's FLOPs do not change with recompute";
  EXPECT_LT(full.memory.activations, none.memory.activations);
}

TEST(TrainingStep, ModelsOfDifferentSizesRankByModelFlopsPerSecond) {
  std::vector<DesignRow> rows(2);
  rows[0].params.total = 1'000'000'000;
  rows[0].tokens_per_s_per_gpu = 40000;
  rows[0].model_flops_per_s_per_gpu = 240e12;
  rows[1].params.total = 7'000'000'000;
  rows[1].tokens_per_s_per_gpu = 9000;
  rows[1].model_flops_per_s_per_gpu = 380e12;
  EXPECT_EQ(RankByOf(rows), DesignRankBy::kModelFlopsPerS);
  RankDesigns(rows);
  EXPECT_EQ(rows[0].params.total, 7'000'000'000) << "equal work: the 7B does more of it per s";
  rows[1].params.total = rows[0].params.total;
  EXPECT_EQ(RankByOf(rows), DesignRankBy::kTokensPerS) << "one size: tokens/s";
}

}  // namespace
}  // namespace crest::tuner
