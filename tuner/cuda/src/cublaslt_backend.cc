// The cuBLASLt measuring backend. The method (DESIGN.md): random operands,
// warm-up to the running clock, cold L2 by rotating operand copies, launches
// batched in a CUDA graph and timed with events, sampling until the noise is
// under a bound, throttled samples discarded, outliers rejected, and every
// algorithm's output verified before it may win.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/tuner/measure/memory_plan.h"
#include "crest/tuner/measure/verification.h"
#include "cuda_status.h"
#include "nvml_clock.h"
#include "tile_ids.h"

namespace crest::measure {
namespace {

using internal::NvmlClock;

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// cuBLASLt types of one Crest dtype.
struct LtTypes {
  cudaDataType_t ab;
  cudaDataType_t c;
  cublasComputeType_t compute;
  const char* compute_name;
};

LtTypes TypesOf(DType d) {
  switch (d) {
    case DType::kFp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "fp32"};
    case DType::kTf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "tf32"};
    case DType::kFp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, "fp32"};
    case DType::kBf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "fp32"};
    case DType::kFp8E4M3:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "fp32"};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "fp32"};
}

// Rounds a float to `d` and back: the value the device will see.
float Quantize(float x, DType d) {
  switch (d) {
    case DType::kFp16:
      return __half2float(__float2half_rn(x));
    case DType::kBf16:
      return __bfloat162float(__float2bfloat16_rn(x));
    case DType::kFp8E4M3:
      return static_cast<float>(__nv_fp8_e4m3(x));
    default:
      return x;
  }
}

// Packs floats (already quantized) into the device representation of `d`.
std::vector<uint8_t> Pack(const std::vector<float>& v, DType d) {
  std::vector<uint8_t> out(v.size() * static_cast<size_t>(ElementBytes(d)));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (d) {
      case DType::kFp16: {
        const __half h = __float2half_rn(v[i]);
        std::memcpy(&out[2 * i], &h, 2);
        break;
      }
      case DType::kBf16: {
        const __nv_bfloat16 h = __float2bfloat16_rn(v[i]);
        std::memcpy(&out[2 * i], &h, 2);
        break;
      }
      case DType::kFp8E4M3: {
        const __nv_fp8_e4m3 h(v[i]);
        std::memcpy(&out[i], &h, 1);
        break;
      }
      default:
        std::memcpy(&out[4 * i], &v[i], 4);
    }
  }
  return out;
}

float Unpack(const uint8_t* p, DType out_dtype) {
  switch (out_dtype) {
    case DType::kFp16: {
      __half h;
      std::memcpy(&h, p, 2);
      return __half2float(h);
    }
    case DType::kBf16: {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      return __bfloat162float(h);
    }
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
  }
}

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

// One GEMM's operands, descriptors and candidate algorithms.
//
// Row-major to column-major: a row-major matrix R[r][c] is the column-major
// matrix Rᵀ (c×r). So row-major C[M,N] = op(A)·op(B) is computed as the
// column-major Cᵀ[N,M] = op(B)ᵀ·op(A)ᵀ: cuBLASLt's "A" is our B, its "B" is
// our A, m' = N, n' = M.
//   our B stored [N,K] (b_transposed): column-major K×N = B; need Bᵀ: op T.
//   our B stored [K,N]:                column-major N×K = Bᵀ: op N.
//   our A stored [M,K]:                column-major K×M = Aᵀ: op N.
//   our A stored [K,M] (a_transposed): column-major M×K = A; need Aᵀ: op T.
struct Problem {
  GemmShape gemm;
  LtTypes types;
  cublasOperation_t op_lt_a;  // applies to our B
  cublasOperation_t op_lt_b;  // applies to our A
  int64_t lt_a_rows, lt_a_cols, lt_b_rows, lt_b_cols;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, c_layout = nullptr;
  ~Problem() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (c_layout) cublasLtMatrixLayoutDestroy(c_layout);
  }
};

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

absl::Status Describe(Problem& p) {
  const GemmShape& g = p.gemm;
  p.types = TypesOf(g.dtype);
  p.op_lt_a = g.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.op_lt_b = g.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.lt_a_rows = g.b_transposed ? g.k : g.n;
  p.lt_a_cols = g.b_transposed ? g.n : g.k;
  p.lt_b_rows = g.a_transposed ? g.m : g.k;
  p.lt_b_cols = g.a_transposed ? g.k : g.m;
  CREST_CUBLAS(cublasLtMatmulDescCreate(&p.desc, p.types.compute, CUDA_R_32F));
  CREST_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &p.op_lt_a,
                                              sizeof p.op_lt_a));
  CREST_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &p.op_lt_b,
                                              sizeof p.op_lt_b));
  if (auto s = MakeLayout(&p.a_layout, p.types.ab, p.lt_a_rows, p.lt_a_cols, g.batch); !s.ok()) {
    return s;
  }
  if (auto s = MakeLayout(&p.b_layout, p.types.ab, p.lt_b_rows, p.lt_b_cols, g.batch); !s.ok()) {
    return s;
  }
  return MakeLayout(&p.c_layout, p.types.c, g.n, g.m, g.batch);
}

int64_t ReadConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  uint64_t value = 0;
  size_t size = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) !=
          CUBLAS_STATUS_SUCCESS ||
      size > sizeof value) {
    return 0;
  }
  cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, size, &size);
  return static_cast<int64_t>(value);
}

AlgoIdentity Identify(const cublasLtMatmulAlgo_t& algo) {
  AlgoIdentity id;
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

class CublasLtBackend final : public Backend {
 public:
  CublasLtBackend(const CublasLtOptions& options, ProbedDevice device, const GpuSpec& gpu)
      : options_(options), probed_(std::move(device)), gpu_(gpu), clock_(probed_.device.uuid) {}
  ~CublasLtBackend() override {
    if (stream_) cudaStreamDestroy(stream_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    if (handle_) cublasLtDestroy(handle_);
  }

  absl::Status Init() {
    CREST_CUDA(cudaSetDevice(options_.device));
    CREST_CUBLAS(cublasLtCreate(&handle_));
    CREST_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CREST_CUDA(cudaEventCreate(&start_));
    CREST_CUDA(cudaEventCreate(&stop_));
    return absl::OkStatus();
  }

  std::string_view Name() const override { return "cublaslt"; }
  bool Measures() const override { return true; }
  const GpuSpec& Gpu() const override { return gpu_; }
  DeviceInfo Device() const override { return probed_.device; }
  SoftwareInfo Software() const override { return probed_.software; }

  absl::StatusOr<GemmOutcome> Run(const GemmShape& gemm) override {
    if (auto s = ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
    if (gemm.dtype == DType::kFp8E4M3 &&
        (probed_.device.cc_major * 10 + probed_.device.cc_minor < 89 || gemm.Layout() != "NT")) {
      return absl::InvalidArgumentError(
          "dtype: fp8 runs on compute capability 8.9+ and only in the NT (forward) layout");
    }
    CREST_CUDA(cudaSetDevice(options_.device));
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    CREST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    const MemoryPlan plan =
        PlanMemory(gemm, probed_.device.l2_bytes, options_.cold_l2, options_.workspace_bytes);
    if (auto s = CheckFits(plan, static_cast<int64_t>(free_bytes)); !s.ok()) return s;

    Problem problem;
    problem.gemm = gemm;
    if (auto s = Describe(problem); !s.ok()) return s;
    auto operands = Allocate(gemm, plan);
    if (!operands.ok()) return operands.status();
    auto candidates = Candidates(problem);
    if (!candidates.ok()) return candidates.status();
    if (candidates->empty()) {
      return absl::InvalidArgumentError(
          StrCat("cuBLASLt offers no algorithm for this GEMM (m=", gemm.m, " n=", gemm.n,
                 " k=", gemm.k, " ", DTypeName(gemm.dtype), " ", gemm.Layout(), ")"));
    }
    if (!warmed_up_) {
      if (auto s = WarmUp(problem, **operands, candidates->front()); !s.ok()) return s;
    }
    GemmOutcome outcome;
    MeasuredGemm& m = outcome.measured.emplace();
    m.gemm = gemm;
    m.lda = gemm.ContiguousA();
    m.ldb = gemm.ContiguousB();
    m.ldc = gemm.ContiguousC();
    m.compute_type = problem.types.compute_name;
    m.cache_mode = options_.cold_l2 ? "cold" : "warm";
    for (const cublasLtMatmulAlgo_t& algo : *candidates) {
      auto result = MeasureAlgo(problem, **operands, algo);
      if (!result.ok()) return result.status();
      m.kernel_seconds += result->first;
      m.algos.push_back(std::move(result->second));
    }
    return outcome;
  }

 private:
  struct Operands {
    int copies = 1;
    int64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
    std::vector<DeviceBuffer> a, b, c;
    DeviceBuffer workspace;
    std::vector<float> host_a, host_b;  // copy 0, as the device sees them
  };

  absl::StatusOr<std::unique_ptr<Operands>> Allocate(const GemmShape& g, const MemoryPlan& plan) {
    auto ops = std::make_unique<Operands>();
    ops->copies = plan.copies;
    const int64_t in = ElementBytes(g.dtype);
    ops->a_bytes = g.batch * g.m * g.k * in;
    ops->b_bytes = g.batch * g.k * g.n * in;
    ops->c_bytes = g.batch * g.m * g.n * ElementBytes(OutputDType(g.dtype));
    // Random values in [-1, 1], never zeros: zeros run faster than data.
    std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(g.m * 31 + g.n * 17 + g.k));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const auto fill = [&](std::vector<float>& v, int64_t elements) {
      v.resize(static_cast<size_t>(elements));
      for (float& x : v) x = Quantize(uniform(rng), g.dtype);
    };
    fill(ops->host_a, g.batch * g.m * g.k);
    fill(ops->host_b, g.batch * g.k * g.n);
    const std::vector<uint8_t> packed_a = Pack(ops->host_a, g.dtype);
    const std::vector<uint8_t> packed_b = Pack(ops->host_b, g.dtype);
    ops->a.resize(static_cast<size_t>(plan.copies));
    ops->b.resize(static_cast<size_t>(plan.copies));
    ops->c.resize(static_cast<size_t>(plan.copies));
    for (int i = 0; i < plan.copies; ++i) {
      const auto u = static_cast<size_t>(i);
      CREST_CUDA(cudaMalloc(&ops->a[u].ptr, static_cast<size_t>(ops->a_bytes)));
      CREST_CUDA(cudaMalloc(&ops->b[u].ptr, static_cast<size_t>(ops->b_bytes)));
      CREST_CUDA(cudaMalloc(&ops->c[u].ptr, static_cast<size_t>(ops->c_bytes)));
      CREST_CUDA(
          cudaMemcpy(ops->a[u].ptr, packed_a.data(), packed_a.size(), cudaMemcpyHostToDevice));
      CREST_CUDA(
          cudaMemcpy(ops->b[u].ptr, packed_b.data(), packed_b.size(), cudaMemcpyHostToDevice));
    }
    if (options_.workspace_bytes > 0) {
      CREST_CUDA(cudaMalloc(&ops->workspace.ptr, static_cast<size_t>(options_.workspace_bytes)));
    }
    return ops;
  }

  absl::StatusOr<std::vector<cublasLtMatmulAlgo_t>> Candidates(const Problem& p) {
    std::vector<cublasLtMatmulAlgo_t> out;
    cublasLtMatmulPreference_t pref = nullptr;
    CREST_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    const auto workspace = static_cast<uint64_t>(options_.workspace_bytes);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                         sizeof workspace);
    if (!options_.exhaustive) {
      std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(options_.top_k));
      int returned = 0;
      const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
          handle_, p.desc, p.a_layout, p.b_layout, p.c_layout, p.c_layout, pref, options_.top_k,
          results.data(), &returned);
      cublasLtMatmulPreferenceDestroy(pref);
      if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED) {
        return internal::CublasStatus(s, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
      }
      for (int i = 0; i < returned; ++i) {
        if (results[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS &&
            Checked(p, results[static_cast<size_t>(i)].algo)) {
          out.push_back(results[static_cast<size_t>(i)].algo);
        }
      }
      return out;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return Exhaustive(p);
  }

  // cublasLtMatmulAlgoCheck: the algorithm runs this problem within the workspace.
  bool Checked(const Problem& p, const cublasLtMatmulAlgo_t& algo) {
    cublasLtMatmulHeuristicResult_t result{};
    return cublasLtMatmulAlgoCheck(handle_, p.desc, p.a_layout, p.b_layout, p.c_layout, p.c_layout,
                                   &algo, &result) == CUBLAS_STATUS_SUCCESS &&
           result.workspaceSize <= static_cast<size_t>(options_.workspace_bytes);
  }

  template <typename T>
  std::vector<T> CapList(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
    size_t size = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS ||
        size == 0) {
      return {};
    }
    std::vector<T> values(size / sizeof(T));
    cublasLtMatmulAlgoCapGetAttribute(&algo, cap, values.data(), size, &size);
    return values;
  }

  template <typename T>
  T Cap(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
    T value{};
    size_t size = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, cap, &value, sizeof value, &size);
    return value;
  }

  // Walks each algorithm's capabilities (tile, stages, split-K with its
  // reduction schemes, swizzle, custom option), keeping what passes
  // cublasLtMatmulAlgoCheck, capped by count and time.
  absl::StatusOr<std::vector<cublasLtMatmulAlgo_t>> Exhaustive(const Problem& p) {
    std::vector<cublasLtMatmulAlgo_t> out;
    std::vector<int> ids(256);
    int returned = 0;
    CREST_CUBLAS(cublasLtMatmulAlgoGetIds(handle_, p.types.compute, CUDA_R_32F, p.types.ab,
                                          p.types.ab, p.types.c, p.types.c,
                                          static_cast<int>(ids.size()), ids.data(), &returned));
    const double deadline = NowS() + options_.max_search_seconds;
    const auto full = [&] {
      return static_cast<int>(out.size()) >= options_.max_algos || NowS() > deadline;
    };
    for (int i = 0; i < returned && !full(); ++i) {
      cublasLtMatmulAlgo_t algo{};
      if (cublasLtMatmulAlgoInit(handle_, p.types.compute, CUDA_R_32F, p.types.ab, p.types.ab,
                                 p.types.c, p.types.c, ids[static_cast<size_t>(i)],
                                 &algo) != CUBLAS_STATUS_SUCCESS) {
        continue;
      }
      auto tiles = CapList<uint32_t>(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
      if (tiles.empty()) tiles = {CUBLASLT_MATMUL_TILE_UNDEFINED};
      auto stages = CapList<uint32_t>(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
      if (stages.empty()) stages = {CUBLASLT_MATMUL_STAGES_UNDEFINED};
      const bool splitk = Cap<int32_t>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
      const auto reductions = Cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
      const bool swizzle = Cap<uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) != 0;
      const auto custom_max = Cap<int32_t>(algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
      for (uint32_t tile : tiles) {
        for (uint32_t stage : stages) {
          for (int32_t custom = 0; custom <= custom_max; ++custom) {
            for (uint32_t swz = 0; swz <= (swizzle ? 1u : 0u); ++swz) {
              for (int32_t split : {1, 2, 4, 8}) {
                if (split > 1 && !splitk) break;
                for (uint32_t scheme = 0; scheme <= (split > 1 ? 8u : 0u);
                     scheme = scheme ? scheme << 1 : 1) {
                  if (split > 1 && (scheme == 0 || (reductions & scheme) == 0)) continue;
                  if (full()) return out;
                  cublasLtMatmulAlgo_t a = algo;
                  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                                       sizeof tile);
                  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage,
                                                       sizeof stage);
                  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,
                                                       &custom, sizeof custom);
                  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz,
                                                       sizeof swz);
                  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                                       sizeof split);
                  if (split > 1) {
                    cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                         &scheme, sizeof scheme);
                  }
                  if (Checked(p, a)) out.push_back(a);
                  if (split == 1) break;
                }
              }
            }
          }
        }
      }
    }
    return out;
  }

  absl::Status Launch(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo,
                      int copy) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const auto u = static_cast<size_t>(copy);
    // cuBLASLt's A is our B and its B is our A (see Problem).
    CREST_CUBLAS(cublasLtMatmul(handle_, p.desc, &alpha, ops.b[u].ptr, p.a_layout, ops.a[u].ptr,
                                p.b_layout, &beta, ops.c[u].ptr, p.c_layout, ops.c[u].ptr,
                                p.c_layout, &algo, ops.workspace.ptr,
                                static_cast<size_t>(options_.workspace_bytes), stream_));
    return absl::OkStatus();
  }

  // Runs the first candidate until the SM clock settles; its median over
  // the last half of the warm-up is the running clock throttling is judged by.
  absl::Status WarmUp(const Problem& p, const Operands& ops, const cublasLtMatmulAlgo_t& algo) {
    const double start = NowS();
    std::vector<double> clocks;
    int copy = 0;
    while (NowS() - start < options_.warmup_seconds) {
      for (int i = 0; i < 8; ++i) {
        if (auto s = Launch(p, ops, algo, copy); !s.ok()) return s;
        copy = (copy + 1) % ops.copies;
      }
      CREST_CUDA(cudaStreamSynchronize(stream_));
      if (NowS() - start > options_.warmup_seconds / 2) clocks.push_back(clock_.SmClockMhz());
    }
    running_clock_mhz_ = Median(clocks);
    warmed_up_ = true;
    return absl::OkStatus();
  }

  // Times one algorithm; returns (kernel seconds spent, result).
  absl::StatusOr<std::pair<double, AlgoResult>> MeasureAlgo(const Problem& p, const Operands& ops,
                                                            const cublasLtMatmulAlgo_t& algo) {
    AlgoResult r;
    r.algo = Identify(algo);
    // One untimed launch per copy, then a single timed one to size the graph.
    for (int c = 0; c < ops.copies; ++c) {
      if (auto s = Launch(p, ops, algo, c); !s.ok()) return s;
    }
    CREST_CUDA(cudaEventRecord(start_, stream_));
    if (auto s = Launch(p, ops, algo, 0); !s.ok()) return s;
    CREST_CUDA(cudaEventRecord(stop_, stream_));
    CREST_CUDA(cudaEventSynchronize(stop_));
    float single_ms = 0;
    CREST_CUDA(cudaEventElapsedTime(&single_ms, start_, stop_));
    // Enough launches per sample that the graph runs ≥ 0.5 ms, so launch
    // gaps and event resolution do not pollute small kernels.
    const int launches =
        std::clamp(static_cast<int>(std::ceil(0.5 / std::max(single_ms, 1e-4f))), 1, 256);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CREST_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < launches; ++i) {
      if (auto s = Launch(p, ops, algo, i % ops.copies); !s.ok()) {
        cudaStreamEndCapture(stream_, &graph);
        if (graph) cudaGraphDestroy(graph);
        return s;
      }
    }
    CREST_CUDA(cudaStreamEndCapture(stream_, &graph));
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (inst != cudaSuccess)
      return internal::CudaStatus(inst, "cudaGraphInstantiate", __FILE__, __LINE__);

    StoppingRule rule(options_.stopping);
    const ThrottleFilter throttle(running_clock_mhz_);
    std::vector<double> clocks;
    double kernel_s = 0;
    int64_t discarded = 0;
    const double start = NowS();
    absl::Status status;
    while (!rule.Finished(NowS() - start)) {
      cudaEventRecord(start_, stream_);
      cudaGraphLaunch(exec, stream_);
      cudaEventRecord(stop_, stream_);
      if (const cudaError_t e = cudaEventSynchronize(stop_); e != cudaSuccess) {
        status = internal::CudaStatus(e, "cudaGraphLaunch", __FILE__, __LINE__);
        break;
      }
      float ms = 0;
      cudaEventElapsedTime(&ms, start_, stop_);
      kernel_s += ms / 1e3;
      const double clock = clock_.SmClockMhz();
      if (!throttle.Keep(clock)) {
        if (++discarded > 10 * options_.stopping.max_samples) break;
        continue;
      }
      rule.Add(ms * 1e3 / launches);
      clocks.push_back(clock);
    }
    cudaGraphExecDestroy(exec);
    if (!status.ok()) return status;
    const std::vector<double> kept = RejectOutliers(rule.samples());
    r.stats = Summarize(kept, clocks);
    r.tflops = r.stats.median_us > 0 ? p.gemm.Flops() / r.stats.median_us / 1e6 : 0;
    auto verified = Verify(p, ops, algo);
    if (!verified.ok()) return verified.status();
    r.verified = verified->ok;
    r.verify_note = verified->note;
    if (r.stats.samples == 0) {
      r.verified = false;
      r.verify_note = StrCat("every sample was throttled (", discarded, " discarded)");
    }
    return std::make_pair(kernel_s, std::move(r));
  }

  // Recomputes 64 sampled output elements in double on the host.
  absl::StatusOr<VerifyResult> Verify(const Problem& p, const Operands& ops,
                                      const cublasLtMatmulAlgo_t& algo) {
    const GemmShape& g = p.gemm;
    const size_t out_bytes = static_cast<size_t>(ElementBytes(OutputDType(g.dtype)));
    CREST_CUDA(cudaMemsetAsync(ops.c[0].ptr, 0xFF, static_cast<size_t>(ops.c_bytes), stream_));
    if (auto s = Launch(p, ops, algo, 0); !s.ok()) return s;
    CREST_CUDA(cudaStreamSynchronize(stream_));
    std::mt19937_64 rng(static_cast<uint64_t>(g.m ^ (g.n << 20) ^ (g.k << 40)));
    std::vector<SampledElement> samples;
    for (int s = 0; s < 64; ++s) {
      const int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(g.batch));
      // Corners first, then random elements.
      const int64_t i =
          s < 2 ? (s == 0 ? 0 : g.m - 1) : static_cast<int64_t>(rng() % static_cast<uint64_t>(g.m));
      const int64_t j =
          s < 2 ? (s == 0 ? 0 : g.n - 1) : static_cast<int64_t>(rng() % static_cast<uint64_t>(g.n));
      const float* a = ops.host_a.data() + b * g.m * g.k;
      const float* bb = ops.host_b.data() + b * g.k * g.n;
      SampledElement e;
      for (int64_t k = 0; k < g.k; ++k) {
        const double x = g.a_transposed ? a[k * g.m + i] : a[i * g.k + k];
        const double y = g.b_transposed ? bb[j * g.k + k] : bb[k * g.n + j];
        e.ref += x * y;
        e.magnitude += std::abs(x * y);
      }
      uint8_t raw[4] = {};
      const auto offset = static_cast<size_t>((b * g.m * g.n + i * g.n + j)) * out_bytes;
      CREST_CUDA(cudaMemcpy(raw, static_cast<const uint8_t*>(ops.c[0].ptr) + offset, out_bytes,
                            cudaMemcpyDeviceToHost));
      e.out = Unpack(raw, OutputDType(g.dtype));
      samples.push_back(e);
    }
    return VerifySamples(samples, g.dtype);
  }

  CublasLtOptions options_;
  ProbedDevice probed_;
  const GpuSpec& gpu_;
  NvmlClock clock_;
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  bool warmed_up_ = false;
  double running_clock_mhz_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakeCublasLtBackend(const CublasLtOptions& options) {
  auto devices = ProbeDevices();
  if (!devices.ok()) return devices.status();
  if (options.device < 0 || options.device >= static_cast<int>(devices->size())) {
    return absl::InvalidArgumentError(StrCat(
        "device: index ", options.device, " is not one of the ", devices->size(), " CUDA devices"));
  }
  ProbedDevice device = (*devices)[static_cast<size_t>(options.device)];
  auto gpu = FindGpu(device.device.name);
  if (!gpu.ok()) {
    return absl::FailedPreconditionError(StrCat(
        "device '", device.device.name,
        "' is not in the GPU catalogue (tuner/src/gpu_catalogue.cc); add it to measure on it"));
  }
  auto backend = std::make_unique<CublasLtBackend>(options, std::move(device), **gpu);
  if (auto s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace crest::measure
