#include "lt_problem.h"

#include <chrono>
#include <cstring>

#include "crest/common/str_cat.h"
#include "crest/measure/algo_grid.h"
#include "cuda_status.h"
#include "tile_ids.h"

namespace crest::measure::internal {
namespace {

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::Status MakeLayout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows,
                        int64_t cols, int64_t batch) {
  CREST_CUBLAS(cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(rows),
                                          static_cast<uint64_t>(cols), rows));
  if (batch > 1) {
    const auto count = static_cast<int32_t>(batch);
    const int64_t stride = rows * cols;
    CREST_CUBLAS(cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof count));
    CREST_CUBLAS(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return absl::OkStatus();
}

// cublasLtMatmulAlgoCheck: the algorithm runs this problem within the workspace.
bool Checked(cublasLtHandle_t handle, const LtProblem& p, const cublasLtMatmulAlgo_t& algo,
             int64_t workspace_bytes) {
  cublasLtMatmulHeuristicResult_t result{};
  return cublasLtMatmulAlgoCheck(handle, p.desc(), p.a_layout(), p.b_layout(), p.c_layout(),
                                 p.c_layout(), &algo, &result) == CUBLAS_STATUS_SUCCESS &&
         result.workspaceSize <= static_cast<size_t>(workspace_bytes);
}

absl::StatusOr<Candidates> Heuristic(cublasLtHandle_t handle, const LtProblem& p,
                                     const CandidateSearch& search) {
  cublasLtMatmulPreference_t pref = nullptr;
  CREST_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  const auto workspace = static_cast<uint64_t>(search.workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(search.top_k));
  int returned = 0;
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublasLtMatmulAlgoGetHeuristic(handle, p.desc(), p.a_layout(), p.b_layout(), p.c_layout(),
                                       p.c_layout(), pref, search.top_k, results.data(), &returned);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  Candidates out;
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return out;  // no algorithm for this problem
  if (s != CUBLAS_STATUS_SUCCESS) {
    return CublasStatus(s, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  }
  for (int i = 0; i < returned; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    if (r.state == CUBLAS_STATUS_SUCCESS && Checked(handle, p, r.algo, search.workspace_bytes)) {
      out.algos.push_back(r.algo);
      out.heuristic_ranks.push_back(i);
    }
  }
  return out;
}

template <typename T>
std::vector<T> CapList(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
  size_t size = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS ||
      size == 0) {
    return {};
  }
  std::vector<T> values(size / sizeof(T));
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, values.data(), size, &size) !=
      CUBLAS_STATUS_SUCCESS) {
    return {};
  }
  return values;
}

// A capability the algorithm does not report reads as T{} (not supported).
template <typename T>
T Cap(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
  T value{};
  size_t size = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, &value, sizeof value, &size) !=
      CUBLAS_STATUS_SUCCESS) {
    return T{};
  }
  return value;
}

// Sets the configuration; false when cuBLASLt refuses an attribute.
bool Configure(cublasLtMatmulAlgo_t& a, const AlgoConfig& c) {
  const auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const auto& value) {
    return cublasLtMatmulAlgoConfigSetAttribute(&a, attr, &value, sizeof value) ==
           CUBLAS_STATUS_SUCCESS;
  };
  return set(CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile) &&
         set(CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages) &&
         set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom_option) &&
         set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle) &&
         set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.split_k) &&
         (c.split_k == 1 || set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction_scheme));
}

absl::StatusOr<std::vector<cublasLtMatmulAlgo_t>> Exhaustive(cublasLtHandle_t handle,
                                                             const LtProblem& p,
                                                             const CandidateSearch& search) {
  const LtTypes& t = p.types();
  std::vector<int> ids(256);
  int returned = 0;
  CREST_CUBLAS(cublasLtMatmulAlgoGetIds(handle, t.compute, CUDA_R_32F, t.ab, t.ab, t.c, t.c,
                                        static_cast<int>(ids.size()), ids.data(), &returned));
  std::vector<AlgoCaps> caps;
  std::vector<cublasLtMatmulAlgo_t> bases;
  for (int i = 0; i < returned; ++i) {
    cublasLtMatmulAlgo_t algo{};
    const int id = ids[static_cast<size_t>(i)];
    if (cublasLtMatmulAlgoInit(handle, t.compute, CUDA_R_32F, t.ab, t.ab, t.c, t.c, id, &algo) !=
        CUBLAS_STATUS_SUCCESS) {
      continue;  // an id this problem's types cannot use
    }
    AlgoCaps c;
    c.algo_id = id;
    c.tiles = CapList<uint32_t>(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
    c.stages = CapList<uint32_t>(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
    c.split_k = Cap<int32_t>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
    c.reduction_mask = Cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    c.swizzle = Cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) != 0;
    c.custom_max = Cap<int32_t>(algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    caps.push_back(std::move(c));
    bases.push_back(algo);
  }
  std::vector<cublasLtMatmulAlgo_t> out;
  const double deadline = NowS() + search.max_search_seconds;
  for (const AlgoConfig& config : ExhaustiveGrid(caps)) {
    if (static_cast<int>(out.size()) >= search.max_algos || NowS() > deadline) break;
    size_t base = 0;
    while (caps[base].algo_id != config.algo_id) ++base;
    cublasLtMatmulAlgo_t a = bases[base];
    if (Configure(a, config) && Checked(handle, p, a, search.workspace_bytes)) out.push_back(a);
  }
  return out;
}

int64_t ReadConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  uint64_t value = 0;
  size_t size = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) !=
          CUBLAS_STATUS_SUCCESS ||
      size > sizeof value ||
      cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, size, &size) !=
          CUBLAS_STATUS_SUCCESS) {
    return 0;  // not an attribute of this algorithm
  }
  return static_cast<int64_t>(value);
}

}  // namespace

LtTypes TypesOf(tuner::DType d) {
  switch (d) {
    case tuner::DType::kFp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "fp32"};
    case tuner::DType::kTf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "tf32"};
    case tuner::DType::kFp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, "fp32"};
    case tuner::DType::kBf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "fp32"};
    case tuner::DType::kFp8E4M3:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "fp32"};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "fp32"};
}

absl::StatusOr<std::unique_ptr<LtProblem>> LtProblem::Describe(const tuner::GemmShape& gemm) {
  std::unique_ptr<LtProblem> p(new LtProblem());
  p->gemm_ = gemm;
  if (auto s = p->Create(); !s.ok()) return s;
  return p;
}

absl::Status LtProblem::Create() {
  const tuner::GemmShape& g = gemm_;
  types_ = TypesOf(g.dtype);
  const cublasOperation_t op_a = g.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // our B
  const cublasOperation_t op_b = g.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // our A
  CREST_CUBLAS(cublasLtMatmulDescCreate(&desc_, types_.compute, CUDA_R_32F));
  CREST_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  CREST_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  if (auto s = MakeLayout(&a_layout_, types_.ab, g.b_transposed ? g.k : g.n,
                          g.b_transposed ? g.n : g.k, g.batch);
      !s.ok()) {
    return s;
  }
  if (auto s = MakeLayout(&b_layout_, types_.ab, g.a_transposed ? g.m : g.k,
                          g.a_transposed ? g.k : g.m, g.batch);
      !s.ok()) {
    return s;
  }
  return MakeLayout(&c_layout_, types_.c, g.n, g.m, g.batch);
}

LtProblem::~LtProblem() {
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
}

absl::StatusOr<Candidates> FindCandidates(cublasLtHandle_t handle, const LtProblem& problem,
                                          const CandidateSearch& search) {
  if (!search.exhaustive) return Heuristic(handle, problem, search);
  auto grid = Exhaustive(handle, problem, search);
  if (!grid.ok()) return grid.status();
  Candidates out;
  out.heuristic_ranks.assign(grid->size(), -1);
  out.algos = *std::move(grid);
  return out;
}

absl::StatusOr<cublasLtMatmulAlgo_t> AlgoFromBytes(cublasLtHandle_t handle,
                                                   const LtProblem& problem,
                                                   std::span<const uint8_t> bytes,
                                                   int64_t workspace_bytes) {
  cublasLtMatmulAlgo_t algo{};
  if (bytes.size() != sizeof algo) {
    return absl::InvalidArgumentError(StrCat("algorithm: ", bytes.size(),
                                             " stored bytes are not a cublasLtMatmulAlgo_t (",
                                             sizeof algo, " bytes)"));
  }
  std::memcpy(&algo, bytes.data(), sizeof algo);
  if (!Checked(handle, problem, algo, workspace_bytes)) {
    return absl::InvalidArgumentError(
        "algorithm: the stored algorithm does not pass cublasLtMatmulAlgoCheck for this GEMM "
        "on this device and library");
  }
  return algo;
}

tuner::AlgoIdentity Identify(const cublasLtMatmulAlgo_t& algo) {
  tuner::AlgoIdentity id;
  id.algo_id = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_ID);
  id.tile = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  const TileDims dims = DecodeTileId(id.tile);
  id.tile_m = dims.m;
  id.tile_n = dims.n;
  id.stages = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  id.split_k = std::max<int64_t>(1, ReadConfig(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
  id.reduction_scheme = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  id.swizzle = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  id.custom_option = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  id.cluster_shape = ReadConfig(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  const auto* bytes = reinterpret_cast<const uint8_t*>(&algo);
  id.bytes.assign(bytes, bytes + sizeof algo);
  return id;
}

}  // namespace crest::measure::internal
