// Internal: the GemmLauncher of crest/measure/launcher.h on a CUDA
// device: one GEMM's candidate algorithms, run from the backend's arena on
// its stream, timed with CUDA events, each sample a replay of a CUDA graph.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <optional>
#include <vector>

#include "crest/measure/arena.h"
#include "crest/measure/launcher.h"
#include "device_arena.h"
#include "lt_problem.h"

namespace crest::measure::internal {

// Events, a pinned read-back buffer and the host flag that releases a
// round of samples, kept by the backend across GEMMs.
class DeviceScratch final {
 public:
  ~DeviceScratch();
  // At least `count` events (created as needed, kept).
  absl::StatusOr<const std::vector<cudaEvent_t>*> Events(size_t count);
  // Pinned host memory of at least `bytes` (allocated as needed, kept).
  absl::StatusOr<void*> Pinned(size_t bytes);
  // A flag in mapped host memory: the host's pointer and the device's.
  struct Flag {
    volatile int* host = nullptr;
    const volatile int* device = nullptr;
  };
  absl::StatusOr<Flag> HostFlag();
  // Marks the end of the work queued on `stream` so far (two events taken in
  // turn, so the mark before stays readable while the next is recorded).
  absl::Status Mark(cudaStream_t stream);
  // The last mark; nullptr before the first.
  cudaEvent_t LastMark() const { return marked_ ? marks_[current_] : nullptr; }

 private:
  std::vector<cudaEvent_t> events_;
  std::array<cudaEvent_t, 2> marks_{nullptr, nullptr};
  size_t current_ = 0;
  bool marked_ = false;
  void* pinned_ = nullptr;
  size_t pinned_bytes_ = 0;
  Flag flag_;
};

struct LaunchContext {
  cublasLtHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  // Sample graphs are captured here, never on `stream`, which may still be
  // running queued load meanwhile; nullptr: on `stream`.
  cudaStream_t capture = nullptr;
  DeviceArena* arena = nullptr;
  DeviceScratch* scratch = nullptr;
};

class CudaGemmLauncher final : public GemmLauncher {
 public:
  CudaGemmLauncher(LaunchContext context, const LtProblem& problem, OperandLayout layout,
                   std::vector<cublasLtMatmulAlgo_t> algos);
  ~CudaGemmLauncher() override;
  CudaGemmLauncher(const CudaGemmLauncher&) = delete;
  CudaGemmLauncher& operator=(const CudaGemmLauncher&) = delete;

  int Candidates() const override { return static_cast<int>(algos_.size()); }
  const tuner::AlgoIdentity& Identity(int c) const override { return ids_[static_cast<size_t>(c)]; }
  absl::StatusOr<double> TimeOneLaunch(int c) override;
  absl::Status PrepareSamples(int launches) override;
  absl::StatusOr<std::vector<double>> Sample(std::span<const int> order) override;
  std::optional<double> IdleBeforeLastSample() const override { return idle_before_us_; }
  absl::StatusOr<int> QueueLoad(int c, int launches) override;
  absl::StatusOr<ReadBack> RunAndRead(int c, std::span<const OutputIndex> elements) override;

 private:
  absl::Status Launch(int c, int copy, cudaStream_t stream);
  // Queues the timed samples of `order` behind the host flag.
  absl::Status QueueRound(std::span<const int> order, const std::vector<cudaEvent_t>& ev);
  absl::StatusOr<cudaGraphExec_t> Capture(int c, int launches);
  void DestroyGraphs();

  LaunchContext ctx_;
  const LtProblem& problem_;
  OperandLayout layout_;
  std::vector<cublasLtMatmulAlgo_t> algos_;
  std::vector<tuner::AlgoIdentity> ids_;
  std::vector<cudaGraphExec_t> graphs_;
  int graph_launches_ = 0;  // launches per sample graph
  std::optional<double> idle_before_us_;
};

}  // namespace crest::measure::internal
