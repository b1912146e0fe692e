// Internal: one GEMM as cuBLASLt sees it (descriptors, layouts) and the
// candidate algorithms for it: the heuristic's top K, or the exhaustive grid
// of crest/measure/algo_grid.h, each checked with
// cublasLtMatmulAlgoCheck.
//
// Row-major to column-major: a row-major matrix R[r][c] is the column-major
// matrix Rᵀ (c×r). So row-major C[M,N] = op(A)·op(B) is computed as the
// column-major Cᵀ[N,M] = op(B)ᵀ·op(A)ᵀ: cuBLASLt's "A" is our B, its "B" is
// our A, m' = N, n' = M.
//   our B stored [N,K] (b_transposed): column-major K×N = B; need Bᵀ: op T.
//   our B stored [K,N]:                column-major N×K = Bᵀ: op N.
//   our A stored [M,K]:                column-major K×M = Aᵀ: op N.
//   our A stored [K,M] (a_transposed): column-major M×K = A; need Aᵀ: op T.
#pragma once

#include <cublasLt.h>

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"

namespace crest::measure::internal {

// cuBLASLt types of one Crest dtype.
struct LtTypes {
  cudaDataType_t ab;
  cudaDataType_t c;
  cublasComputeType_t compute;
  const char* compute_name;
};
LtTypes TypesOf(tuner::DType dtype);

class LtProblem final {
 public:
  // Creates the descriptors of `gemm`; errors of cuBLASLt as statuses.
  static absl::StatusOr<std::unique_ptr<LtProblem>> Describe(const tuner::GemmShape& gemm);
  ~LtProblem();
  LtProblem(const LtProblem&) = delete;
  LtProblem& operator=(const LtProblem&) = delete;

  const tuner::GemmShape& gemm() const { return gemm_; }
  const LtTypes& types() const { return types_; }
  cublasLtMatmulDesc_t desc() const { return desc_; }
  cublasLtMatrixLayout_t a_layout() const { return a_layout_; }  // of our B
  cublasLtMatrixLayout_t b_layout() const { return b_layout_; }  // of our A
  cublasLtMatrixLayout_t c_layout() const { return c_layout_; }

 private:
  LtProblem() = default;
  absl::Status Create();
  tuner::GemmShape gemm_;
  LtTypes types_{};
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr;
  cublasLtMatrixLayout_t b_layout_ = nullptr;
  cublasLtMatrixLayout_t c_layout_ = nullptr;
};

struct CandidateSearch {
  int top_k = 8;
  bool exhaustive = false;
  int max_algos = 64;
  double max_search_seconds = 30;  // exhaustive: time for the checks, per GEMM
  int64_t workspace_bytes = 0;
};

// The algorithms to measure, each passing cublasLtMatmulAlgoCheck within
// the workspace, and each one's place in the heuristic's list (-1 for the
// exhaustive grid's). Empty when cuBLASLt offers none.
struct Candidates {
  std::vector<cublasLtMatmulAlgo_t> algos;
  std::vector<int> heuristic_ranks;  // one per algorithm
};
absl::StatusOr<Candidates> FindCandidates(cublasLtHandle_t handle, const LtProblem& problem,
                                          const CandidateSearch& search);
// `bytes` (an AlgoIdentity's raw cublasLtMatmulAlgo_t, as stored) as an
// algorithm for `problem`, checked with cublasLtMatmulAlgoCheck within the
// workspace. InvalidArgument when the bytes are not an algorithm's size or
// the check fails.
absl::StatusOr<cublasLtMatmulAlgo_t> AlgoFromBytes(cublasLtHandle_t handle,
                                                   const LtProblem& problem,
                                                   std::span<const uint8_t> bytes,
                                                   int64_t workspace_bytes);

// The algorithm's configuration attributes and raw bytes.
tuner::AlgoIdentity Identify(const cublasLtMatmulAlgo_t& algo);

}  // namespace crest::measure::internal
