// Predictor throughput: how many GEMM predictions one core makes per second.
// Target (issue 2): >= 100,000 per second. Shapes cycle through a d_ff
// window so no branch or cache is warmed on one shape.
#include <vector>

#include "benchmark/benchmark.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"

namespace {

std::vector<crest::tuner::GemmShape> Shapes() {
  std::vector<crest::tuner::GemmShape> out;
  for (int64_t d_ff = 10794; d_ff <= 11050; ++d_ff) {
    crest::tuner::GemmShape g;
    g.m = 8192;
    g.n = 4096;
    g.k = d_ff;
    out.push_back(g);
    g.n = 2 * d_ff;
    g.k = 4096;
    out.push_back(g);
  }
  return out;
}

void BM_PredictOneGemm(benchmark::State& state) {
  const auto shapes = Shapes();
  const crest::tuner::GpuSpec& gpu = **crest::tuner::FindGpu("h100");
  size_t i = 0;
  for (auto _ : state) {
    auto p = crest::tuner::Predict(shapes[i], gpu);
    benchmark::DoNotOptimize(p);
    i = (i + 1 == shapes.size()) ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictOneGemm);

// A whole `crest dff` ranking: 257 candidates × 2 GEMMs, predicted.
void BM_RankDffWindow(benchmark::State& state) {
  crest::tuner::DffQuery q;
  q.dff.hidden = 4096;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  const auto timer = crest::tuner::PredictorTimer(**crest::tuner::FindGpu("h100"));
  for (auto _ : state) {
    auto r = crest::tuner::RankDff(q, timer);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * 257 * 2);
}
BENCHMARK(BM_RankDffWindow);

}  // namespace

BENCHMARK_MAIN();
