// The cuBLASLt measuring backend: the device side of the method. The
// pipeline (crest/measure/pipeline.h) makes every decision; this file
// owns the device: the cuBLASLt handle, the stream, one operand arena for
// the sweep, NVML, and for each GEMM its descriptors and candidates.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "crest/common/str_cat.h"
#include "crest/measure/arena.h"
#include "crest/measure/cuda_backend.h"
#include "crest/measure/retimer.h"
#include "crest/measure/set_racer.h"
#include "crest/tuner/shapes.h"
#include "cuda_launcher.h"
#include "cuda_status.h"
#include "device_arena.h"
#include "device_side.h"
#include "lt_problem.h"
#include "nvml_monitor.h"
#include "pinned_race.h"

namespace crest::measure {
namespace {

using internal::CudaGemmLauncher;
using internal::DeviceArena;
using internal::DeviceScratch;
using internal::LtProblem;

constexpr uint64_t kOperandSeed = 0x5eed;

class CublasLtBackend final : public tuner::Backend, public SetRacer, public Retimer {
 public:
  CublasLtBackend(const CublasLtOptions& options, ProbedDevice device, const tuner::GpuSpec& gpu)
      : options_(options),
        probed_(std::move(device)),
        gpu_(gpu),
        monitor_(probed_.device.uuid),
        arena_(kOperandSeed),
        governor_(options.measure.mode.clocks, Tuning(options, probed_)) {}
  ~CublasLtBackend() override {
    scratch_.reset();  // events and pinned memory before the stream and handle
    if (capture_) cudaStreamDestroy(capture_);
    if (stream_) cudaStreamDestroy(stream_);
    if (handle_) cublasLtDestroy(handle_);
  }

  absl::Status Init() {
    CREST_CUDA(cudaSetDevice(options_.device));
    CREST_CUBLAS(cublasLtCreate(&handle_));
    CREST_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CREST_CUDA(cudaStreamCreateWithFlags(&capture_, cudaStreamNonBlocking));
    scratch_ = std::make_unique<DeviceScratch>();
    return absl::OkStatus();
  }

  std::string_view Name() const override { return "cublaslt"; }
  bool Measures() const override { return true; }
  const tuner::GpuSpec& Gpu() const override { return gpu_; }
  tuner::DeviceInfo Device() const override { return probed_.device; }
  tuner::SoftwareInfo Software() const override { return probed_.software; }
  tuner::MeasureMode Mode() const override { return options_.measure.mode; }

  absl::Status Reserve(std::span<const tuner::GemmShape> plan) override {
    CREST_CUDA(cudaSetDevice(options_.device));
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    CREST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    // GEMMs too large for the device on their own fail when run, with the
    // memory they need; the arena is sized for the rest.
    std::vector<tuner::GemmShape> fitting;
    for (const tuner::GemmShape& g : plan) {
      if (CheckFits(PlanFor({&g, 1}).TotalBytes(), static_cast<int64_t>(free_bytes)).ok()) {
        fitting.push_back(g);
      }
    }
    if (fitting.empty()) return absl::OkStatus();
    return arena_.Hold(PlanFor(fitting));
  }

  absl::StatusOr<StudyRaceResult> RaceSets(std::span<const std::vector<PinnedGemm>> sets,
                                           const StudyRaceOptions& options,
                                           const std::function<bool()>& stop) override {
    std::vector<tuner::GemmShape> all;
    for (const auto& set : sets) {
      for (const PinnedGemm& p : set) {
        if (auto s = Refuse(p.gemm); !s.ok()) return s;
        all.push_back(p.gemm);
      }
    }
    CREST_CUDA(cudaSetDevice(options_.device));
    if (auto s = arena_.Hold(PlanFor(all)); !s.ok()) return s;
    const internal::PinnedRaceDevice device{Context(), probed_.device.l2_bytes,
                                            options_.measure.mode.cache, options_.workspace_bytes,
                                            arena_.plan()};
    EngineClock& clock = SteadyEngineClock();
    auto result = internal::RacePinnedSets(device, sets, options, stop, monitor_, clock);
    governor_.MarkBusy(clock.NowS());
    return result;
  }

  absl::StatusOr<tuner::GemmOutcome> Run(const tuner::GemmShape& gemm) override {
    return Measure(gemm, [this](const LtProblem& problem) {
      return internal::FindCandidates(handle_, problem, Search());
    });
  }

  // cuBLASLt's first choice now, then each stored algorithm it still
  // accepts (cublasLtMatmulAlgoCheck) that is not that choice.
  absl::StatusOr<tuner::GemmOutcome> Retime(const tuner::GemmShape& gemm,
                                            std::span<const tuner::AlgoIdentity> stored) override {
    return Measure(
        gemm, [this, stored](const LtProblem& problem) -> absl::StatusOr<internal::Candidates> {
          internal::CandidateSearch first = Search();
          first.top_k = 1;
          first.exhaustive = false;
          auto found = internal::FindCandidates(handle_, problem, first);
          if (!found.ok()) return found.status();
          for (const tuner::AlgoIdentity& a : stored) {
            auto algo =
                internal::AlgoFromBytes(handle_, problem, a.bytes, options_.workspace_bytes);
            if (!algo.ok()) continue;  // this library no longer runs it
            const tuner::AlgoIdentity id = internal::Identify(*algo);
            const bool known = std::any_of(found->algos.begin(), found->algos.end(),
                                           [&id](const cublasLtMatmulAlgo_t& seen) {
                                             return internal::Identify(seen).bytes == id.bytes;
                                           });
            if (known) continue;
            found->algos.push_back(*algo);
            found->heuristic_ranks.push_back(-1);
          }
          return found;
        });
  }

 private:
  // Times `gemm` over the candidates `choose` finds for its problem.
  template <typename Choose>
  absl::StatusOr<tuner::GemmOutcome> Measure(const tuner::GemmShape& gemm, const Choose& choose) {
    if (auto s = Refuse(gemm); !s.ok()) return s;
    CREST_CUDA(cudaSetDevice(options_.device));
    EngineClock& clock = SteadyEngineClock();
    tuner::HostStages host;
    double step = clock.NowS();
    if (auto s = arena_.Hold(PlanFor({&gemm, 1})); !s.ok()) return s;
    if (auto s = arena_.Fill(gemm.dtype, stream_); !s.ok()) return s;
    host.operands_s = clock.NowS() - step;
    step = clock.NowS();
    auto problem = LtProblem::Describe(gemm);
    if (!problem.ok()) return problem.status();
    absl::StatusOr<internal::Candidates> algos = choose(**problem);
    if (!algos.ok()) return algos.status();
    host.plan_s = clock.NowS() - step;
    if (algos->algos.empty()) {
      return absl::InvalidArgumentError(
          StrCat("cuBLASLt offers no algorithm for this GEMM (m=", gemm.m, " n=", gemm.n,
                 " k=", gemm.k, " ", tuner::DTypeName(gemm.dtype), " ", gemm.Layout(), ")"));
    }
    const OperandLayout layout =
        LayOut(gemm, probed_.device.l2_bytes, options_.measure.mode.cache, arena_.plan());
    const int64_t element = tuner::ElementBytes(gemm.dtype);
    const GemmOperands operands{
        {arena_.seed(), layout.a_offset[0] / element, layout.b_offset[0] / element}, layout.copies};
    CudaGemmLauncher launcher(Context(), **problem, layout, algos->algos);
    auto measured = MeasureGemm(gemm, options_.measure, operands, launcher, monitor_, clock,
                                governor_, options_.tuning);
    if (!measured.ok()) return measured.status();
    measured->host.operands_s = host.operands_s;
    measured->host.plan_s = host.plan_s;
    measured->lda = gemm.ContiguousA();
    measured->ldb = gemm.ContiguousB();
    measured->ldc = gemm.ContiguousC();
    measured->compute_type = (*problem)->types().compute_name;
    // The pipeline reports the launcher's candidates in their order.
    for (size_t i = 0; i < measured->algos.size() && i < algos->heuristic_ranks.size(); ++i) {
      measured->algos[i].heuristic_rank = algos->heuristic_ranks[i];
    }
    tuner::GemmOutcome outcome;
    outcome.measured = *std::move(measured);
    return outcome;
  }

  internal::LaunchContext Context() {
    return {handle_, stream_, capture_, &arena_, scratch_.get()};
  }

  static EngineTuning Tuning(const CublasLtOptions& options, const ProbedDevice& device) {
    EngineTuning t = options.tuning;
    if (t.boost_clock_mhz <= 0) t.boost_clock_mhz = device.device.sm_clock_mhz;
    return t;
  }

  ArenaPlan PlanFor(std::span<const tuner::GemmShape> gemms) const {
    return PlanArena(gemms, probed_.device.l2_bytes, options_.measure.mode.cache,
                     options_.workspace_bytes);
  }

  internal::CandidateSearch Search() const {
    const MeasureOptions& m = options_.measure;
    return {m.top_k, m.exhaustive, m.max_algos, options_.max_search_seconds,
            options_.workspace_bytes};
  }

  absl::Status Refuse(const tuner::GemmShape& gemm) const {
    if (auto s = tuner::ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
    const tuner::DeviceInfo& d = probed_.device;
    if (gemm.dtype == tuner::DType::kFp8E4M3 &&
        (d.cc_major * 10 + d.cc_minor < 89 || gemm.Layout() != tuner::kFp8Layout)) {
      return absl::InvalidArgumentError(
          StrCat("dtype: fp8 runs on compute capability 8.9+ and only in the ", tuner::kFp8Layout,
                 " layout (Crest's fp8 shapes are all ", tuner::kFp8Layout, "; this GEMM is ",
                 gemm.Layout(), ")"));
    }
    return absl::OkStatus();
  }

  CublasLtOptions options_;
  ProbedDevice probed_;
  const tuner::GpuSpec& gpu_;
  internal::NvmlMonitor monitor_;
  DeviceArena arena_;
  ClockGovernor governor_;
  std::unique_ptr<DeviceScratch> scratch_;
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t capture_ = nullptr;  // sample graphs are captured here (LaunchContext)
};

}  // namespace

absl::StatusOr<std::unique_ptr<tuner::Backend>> device_side::MakeCublasLtBackend(
    const CublasLtOptions& options) {
  if (auto s = ValidateMeasureOptions(options.measure); !s.ok()) return s;
  auto devices = device_side::ProbeDevices();
  if (!devices.ok()) return devices.status();
  if (options.device < 0 || options.device >= static_cast<int>(devices->size())) {
    return absl::InvalidArgumentError(StrCat(
        "device: index ", options.device, " is not one of the ", devices->size(), " CUDA devices"));
  }
  ProbedDevice device = (*devices)[static_cast<size_t>(options.device)];
  auto gpu = tuner::FindGpu(device.device.name);
  if (!gpu.ok()) {
    return absl::FailedPreconditionError(StrCat(
        "device '", device.device.name,
        "' is not in the GPU catalogue (tuner/src/gpu_catalogue.cc); add it to measure on it"));
  }
  auto backend = std::make_unique<CublasLtBackend>(options, std::move(device), **gpu);
  if (auto s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<tuner::Backend>(std::move(backend));
}

}  // namespace crest::measure
