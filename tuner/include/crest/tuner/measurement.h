// What a measuring backend reports for one GEMM: every algorithm it timed,
// with its identity and statistics. Never produced by the predictor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crest/tuner/gemm.h"

namespace crest {

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

// Sample statistics of one algorithm's kernel time [µs].
struct SampleStats {
  double median_us = 0;
  double mean_us = 0;
  double min_us = 0;
  double stdev_us = 0;
  int64_t samples = 0;
  double sm_clock_mhz = 0;  // median SM clock over the kept samples
};

struct AlgoResult {
  AlgoIdentity algo;
  SampleStats stats;
  bool verified = false;    // output matched the fp32 reference on sampled elements
  std::string verify_note;  // why verification failed, if it did
  double tflops = 0;        // from the median
};

struct MeasuredGemm {
  GemmShape gemm;
  int64_t lda = 0;  // leading dimensions as run [elements]
  int64_t ldb = 0;
  int64_t ldc = 0;
  std::string compute_type;         // e.g. "fp32"
  std::string cache_mode = "cold";  // "cold" (L2 flushed/rotated) or "warm"
  std::vector<AlgoResult> algos;
  double kernel_seconds = 0;  // device time inside the timed kernels [s]
};

}  // namespace crest
