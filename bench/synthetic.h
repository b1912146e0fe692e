// Benchmarks only: made-up measurements (there is no GPU where the
// benchmarks run); latency percentiles (percentiles.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"
#include "percentiles.h"

namespace crest::bench {

// The made-up H100 the benchmarks' results belong to.
inline tuner::DeviceInfo SyntheticH100(const std::string& uuid, const std::string& host = "") {
  tuner::DeviceInfo dev;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.uuid = uuid;
  dev.gpu_model = "H100-SXM";
  dev.sm_count = 132;
  dev.host = host;
  return dev;
}

// Eight algorithms of `g` (seven verified) around 700 TFLOP/s divided by
// `slowdown`, each time jittered by 0.9–1.3×.
inline tuner::MeasuredGemm SyntheticMeasurement(const tuner::GemmShape& g, std::mt19937_64& rng,
                                                double slowdown = 1.0) {
  std::uniform_real_distribution<double> jitter(0.9, 1.3);
  tuner::MeasuredGemm m;
  m.gemm = g;
  m.lda = g.k;
  m.ldb = g.k;
  m.ldc = g.n;
  m.compute_type = "fp32";
  const double base = g.Flops() / 700e6 * slowdown;  // µs
  for (int a = 0; a < 8; ++a) {
    tuner::AlgoResult r;
    r.algo.algo_id = 10 + a;
    r.algo.tile_m = a % 2 ? 128 : 256;
    r.algo.tile_n = 128;
    r.algo.bytes.assign(64, static_cast<uint8_t>(a));
    r.stats.median_us = base * jitter(rng);
    r.stats.mean_us = r.stats.median_us;
    r.stats.min_us = r.stats.median_us * 0.98;
    r.stats.samples = 40;
    r.stats.sm_clock_mhz = 1980;
    r.verified = a != 7;
    r.tflops = g.Flops() / r.stats.median_us / 1e6;
    m.algos.push_back(r);
  }
  return m;
}

}  // namespace crest::bench
