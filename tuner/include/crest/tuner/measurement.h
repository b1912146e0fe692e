// What a measuring backend reports for one GEMM: every algorithm it timed,
// with its identity and statistics, and how it was measured. Never produced
// by the predictor.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crest/tuner/gemm.h"

namespace crest::tuner {

// Whether operands come to a GEMM from memory (cold: copies are rotated so
// the L2 holds none of them) or from the L2 (warm: one copy, reused).
enum class CacheMode { kCold, kWarm };
std::string_view CacheModeName(CacheMode mode);  // "cold", "warm"
std::optional<CacheMode> ParseCacheMode(std::string_view text);

// The GPU state a measurement describes. Sustained: clocks and power have
// settled under load (an H100 at its power cap), as in training. Burst: the
// boost clock right after idle, as a few launches see it.
enum class ClockPolicy { kSustained, kBurst };
std::string_view ClockPolicyName(ClockPolicy policy);  // "sustained", "burst"
std::optional<ClockPolicy> ParseClockPolicy(std::string_view text);

// How a measurement was made. Results of different modes answer different
// questions and are never compared, resumed or ranked together.
struct MeasureMode {
  CacheMode cache = CacheMode::kCold;
  ClockPolicy clocks = ClockPolicy::kSustained;
  auto operator<=>(const MeasureMode&) const = default;
};

// Which of a GEMM's measured algorithms answers for it: the fastest
// verified one Crest's search found (best), or cuBLASLt's heuristic's first
// choice (default: what a framework that does not pin algorithms runs,
// PyTorch included), timed in the same rounds.
enum class AlgoChoice { kBest, kDefault };
std::string_view AlgoChoiceName(AlgoChoice choice);  // "best", "default"

// The order-statistic interval of the median that the engine stores
// (measure/sampling.h) for `samples` sorted samples: [x(rank), x(n+1-rank)]
// with the largest rank whose coverage, 1 − 2·P(X < rank) for
// X ~ Binomial(n, 1/2), is at least 95%. From 6 samples on the coverage is
// at least 0.95; below that the interval is the samples' range (rank 1),
// which covers the median with probability 1 − 2^(1−n) (5 samples: 93.75%).
// {0, 0} for no samples.
struct MedianOrderInterval {
  int64_t rank = 0;
  double coverage = 0;
};
MedianOrderInterval MedianIntervalOf(int64_t samples);
// The same at another confidence (0 < confidence < 1): the largest rank
// whose coverage is at least `confidence`, else rank 1 (the range).
MedianOrderInterval MedianIntervalOf(int64_t samples, double confidence);
double MedianIntervalCoverage(int64_t samples);
// "95%" when the coverage reaches it, else the true figure ("93.75%").
std::string CoverageText(int64_t samples);
std::optional<AlgoChoice> ParseAlgoChoice(std::string_view text);

// A cuBLASLt algorithm, stored by its configuration attributes and its raw
// bytes (cublasLtMatmulAlgo_t), never by a position in a heuristic list.
struct AlgoIdentity {
  int64_t algo_id = 0;
  int64_t tile = 0;  // CUBLASLT_MATMUL_TILE_* enumerant
  int tile_m = 0;    // the same, decoded [elements]; 0 if unknown
  int tile_n = 0;
  int64_t stages = 0;  // CUBLASLT_MATMUL_STAGES_* enumerant
  int64_t split_k = 1;
  int64_t reduction_scheme = 0;
  int64_t swizzle = 0;
  int64_t custom_option = 0;
  int64_t cluster_shape = 0;   // CUBLASLT_CLUSTER_SHAPE_* enumerant
  std::vector<uint8_t> bytes;  // raw cublasLtMatmulAlgo_t
};

// True when both name one algorithm configuration (id, tile, stages,
// split-K, reduction, swizzle, custom option, cluster); the raw bytes may
// differ where the library leaves them unset.
bool SameConfiguration(const AlgoIdentity& a, const AlgoIdentity& b);

// Sample statistics of one algorithm's kernel time [µs], and the GPU state
// its samples were taken in.
struct SampleStats {
  double median_us = 0;
  double mean_us = 0;
  double min_us = 0;
  double stdev_us = 0;
  int64_t samples = 0;
  // 95% confidence interval of the median (order statistics; with fewer
  // than 6 samples the range of the samples, at lower confidence).
  double ci_low_us = 0;
  double ci_high_us = 0;
  double sm_clock_mhz = 0;        // median SM clock over the kept samples; 0 unknown
  double power_w = 0;             // median board power over the kept samples; 0 unknown
  uint64_t throttle_reasons = 0;  // NVML clock-event reasons seen while sampling (OR)
  int64_t discarded = 0;          // samples the clock policy did not count
};

struct AlgoResult {
  AlgoIdentity algo;
  SampleStats stats;
  bool verified = false;    // output matched the reference on sampled elements
  std::string verify_note;  // why verification failed, if it did
  std::string clock_note;   // set when the clock policy could not be honoured
  double tflops = 0;        // from the median
  // Its place in cuBLASLt's heuristic list (0: the heuristic's first choice,
  // what a call that does not pin an algorithm runs, PyTorch's included);
  // -1 when it did not come from that list (the exhaustive search).
  int heuristic_rank = -1;
};

// Where one GEMM's engine time went outside its timed kernels, by step [s]
// (docs/measurement.md, "Accounting"). 0 where a backend does not say.
struct HostStages {
  double operands_s = 0;  // holding and filling the operand arena
  double plan_s = 0;      // describing the problem and searching the algorithms
  double graphs_s = 0;    // preparing the sample launches (a graph per algorithm)
  // Checking each algorithm's output: the host's part (references, read-back,
  // waits); the device time of the runs is kernel time.
  double verify_s = 0;

  double readings_s = 0;  // reading the GPU's clocks and power (NVML) between rounds

  double Total() const { return operands_s + plan_s + graphs_s + verify_s + readings_s; }
  HostStages& operator+=(const HostStages& o) {
    operands_s += o.operands_s;
    plan_s += o.plan_s;
    graphs_s += o.graphs_s;
    readings_s += o.readings_s;
    verify_s += o.verify_s;
    return *this;
  }
};

struct MeasuredGemm {
  GemmShape gemm;
  int64_t lda = 0;  // leading dimensions as run [elements]
  int64_t ldb = 0;
  int64_t ldc = 0;
  std::string compute_type;  // e.g. "fp32"
  MeasureMode mode;
  double settled_clock_mhz = 0;  // the clock the policy judged samples by; 0 unknown
  std::vector<AlgoResult> algos;
  // Device time of the engine's launches [s]: the timed ones, and the untimed
  // warm-up, reload and keep-load.
  double kernel_seconds = 0;
  // Of the wall time, the untimed load that made up the GPU's idle gaps
  // before sampling (sustained clocks: the reload) [s].
  double reload_seconds = 0;
  // Of the device time, the untimed load queued to run while the host
  // worked (graph building, and the host's work until the next GEMM: the
  // keep-load) [s]; counted at the GEMM's own launch time.
  double keep_load_seconds = 0;
  HostStages host;  // the engine's steps outside them
};

}  // namespace crest::tuner
