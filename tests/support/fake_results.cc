#include "fake_results.h"

namespace crest::testing {

tuner::DeviceInfo FakeH100(const std::string& uuid, const std::string& host) {
  tuner::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = uuid;
  d.gpu_model = "H100-SXM";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.l2_bytes = 50 << 20;
  d.memory_bytes = int64_t{80} << 30;
  d.sm_clock_mhz = 1980;
  d.memory_clock_mhz = 2619;
  d.host = host;
  return d;
}

tuner::SoftwareInfo FakeSoftware(int64_t cublaslt) { return {"580.159.04", 13000, cublaslt}; }

tuner::MeasuredGemm FakeMeasurement(const tuner::GemmShape& gemm, double base_us, int algos,
                                    int unverified_index) {
  tuner::MeasuredGemm m;
  m.gemm = gemm;
  m.lda = gemm.a_transposed ? gemm.m : gemm.k;
  m.ldb = gemm.b_transposed ? gemm.k : gemm.n;
  m.ldc = gemm.n;
  m.compute_type = "fp32";
  m.settled_clock_mhz = 1455;
  for (int i = 0; i < algos; ++i) {
    tuner::AlgoResult r;
    r.algo.algo_id = 20 + i;
    r.algo.tile = i % 2 == 0 ? 24 : 21;
    r.algo.tile_m = i % 2 == 0 ? 256 : 128;
    r.algo.tile_n = 128;
    r.algo.stages = 8;
    r.algo.bytes = {static_cast<uint8_t>(i), 1, 2, 3};
    r.stats.median_us = base_us * (1.0 + i / 10.0);
    r.stats.mean_us = r.stats.median_us * 1.01;
    r.stats.min_us = r.stats.median_us * 0.99;
    r.stats.stdev_us = r.stats.median_us * 0.005;
    r.stats.samples = 50;
    r.stats.ci_low_us = r.stats.median_us * 0.99;
    r.stats.ci_high_us = r.stats.median_us * 1.01;
    r.stats.sm_clock_mhz = 1455;  // sustained: at the power cap
    r.stats.power_w = 690;
    r.stats.throttle_reasons = 0x4;
    r.heuristic_rank = i;  // the fake engine lists them in the heuristic's order
    r.verified = i != unverified_index;
    if (!r.verified) {
      r.stats.median_us = base_us * 0.5;
      r.stats.ci_low_us = r.stats.median_us * 0.99;
      r.stats.ci_high_us = r.stats.median_us * 1.01;
      r.verify_note = "max relative error 0.3 above 0.02";
    }
    r.tflops = gemm.Flops() / r.stats.median_us / 1e6;
    m.algos.push_back(r);
  }
  return m;
}

}  // namespace crest::testing
