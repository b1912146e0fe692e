#include "cuda_launcher.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cuda_status.h"
#include "device_kernels.h"

namespace crest::measure::internal {
namespace {

// Elapsed device time between two completed events [µs].
absl::StatusOr<double> ElapsedUs(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  CREST_CUDA(cudaEventElapsedTime(&ms, from, to));
  return static_cast<double>(ms) * 1e3;
}

double Unpack(const uint8_t* p, tuner::DType out) {
  switch (out) {
    case tuner::DType::kFp16: {
      __half h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(__half2float(h));
    }
    case tuner::DType::kBf16: {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(__bfloat162float(h));
    }
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return static_cast<double>(f);
    }
  }
}

}  // namespace

DeviceScratch::~DeviceScratch() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  for (cudaEvent_t e : marks_) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (pinned_ != nullptr) cudaFreeHost(pinned_);
  if (flag_.host != nullptr) cudaFreeHost(const_cast<int*>(flag_.host));
}

absl::StatusOr<DeviceScratch::Flag> DeviceScratch::HostFlag() {
  if (flag_.host != nullptr) return flag_;
  void* host = nullptr;
  CREST_CUDA(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped));
  void* device = nullptr;
  if (const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0); e != cudaSuccess) {
    cudaFreeHost(host);
    return CudaStatus(e, "cudaHostGetDevicePointer", __FILE__, __LINE__);
  }
  flag_.host = static_cast<volatile int*>(host);
  flag_.device = static_cast<const volatile int*>(device);
  *flag_.host = 1;
  return flag_;
}

absl::Status DeviceScratch::Mark(cudaStream_t stream) {
  const size_t next = marked_ ? 1 - current_ : 0;
  if (marks_[next] == nullptr) CREST_CUDA(cudaEventCreate(&marks_[next]));
  CREST_CUDA(cudaEventRecord(marks_[next], stream));
  current_ = next;
  marked_ = true;
  return absl::OkStatus();
}

absl::StatusOr<const std::vector<cudaEvent_t>*> DeviceScratch::Events(size_t count) {
  while (events_.size() < count) {
    cudaEvent_t e = nullptr;
    CREST_CUDA(cudaEventCreate(&e));
    events_.push_back(e);
  }
  return &events_;
}

absl::StatusOr<void*> DeviceScratch::Pinned(size_t bytes) {
  if (pinned_bytes_ >= bytes) return pinned_;
  if (pinned_ != nullptr) CREST_CUDA(cudaFreeHost(pinned_));
  pinned_ = nullptr;
  pinned_bytes_ = 0;
  CREST_CUDA(cudaMallocHost(&pinned_, bytes));
  pinned_bytes_ = bytes;
  return pinned_;
}

CudaGemmLauncher::CudaGemmLauncher(LaunchContext context, const LtProblem& problem,
                                   OperandLayout layout, std::vector<cublasLtMatmulAlgo_t> algos)
    : ctx_(context), problem_(problem), layout_(std::move(layout)), algos_(std::move(algos)) {
  for (const auto& a : algos_) ids_.push_back(Identify(a));
}

CudaGemmLauncher::~CudaGemmLauncher() { DestroyGraphs(); }

void CudaGemmLauncher::DestroyGraphs() {
  for (cudaGraphExec_t g : graphs_) {
    if (g != nullptr) cudaGraphExecDestroy(g);
  }
  graphs_.clear();
}

absl::Status CudaGemmLauncher::Launch(int c, int copy, cudaStream_t stream) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto u = static_cast<size_t>(copy);
  const DeviceArena& arena = *ctx_.arena;
  void* c_ptr = arena.At(layout_.c_offset[u]);
  // cuBLASLt's A is our B and its B is our A (lt_problem.h).
  CREST_CUBLAS(cublasLtMatmul(
      ctx_.handle, problem_.desc(), &alpha, arena.At(layout_.b_offset[u]), problem_.a_layout(),
      arena.At(layout_.a_offset[u]), problem_.b_layout(), &beta, c_ptr, problem_.c_layout(), c_ptr,
      problem_.c_layout(), &algos_[static_cast<size_t>(c)], arena.At(layout_.workspace_offset),
      static_cast<size_t>(arena.plan().workspace_bytes), stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaGemmLauncher::TimeOneLaunch(int c) {
  for (int copy = 0; copy < layout_.copies; ++copy) {
    if (auto s = Launch(c, copy, ctx_.stream); !s.ok()) return s;
  }
  auto events = ctx_.scratch->Events(2);
  if (!events.ok()) return events.status();
  const std::vector<cudaEvent_t>& ev = **events;
  CREST_CUDA(cudaEventRecord(ev[0], ctx_.stream));
  if (auto s = Launch(c, 0, ctx_.stream); !s.ok()) return s;
  CREST_CUDA(cudaEventRecord(ev[1], ctx_.stream));
  if (auto s = ctx_.scratch->Mark(ctx_.stream); !s.ok()) return s;
  CREST_CUDA(cudaEventSynchronize(ev[1]));
  return ElapsedUs(ev[0], ev[1]);
}

absl::StatusOr<cudaGraphExec_t> CudaGemmLauncher::Capture(int c, int launches) {
  const cudaStream_t stream = ctx_.capture != nullptr ? ctx_.capture : ctx_.stream;
  const cudaError_t began = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  absl::Status launched = began == cudaSuccess
                              ? absl::OkStatus()
                              : CudaStatus(began, "cudaStreamBeginCapture", __FILE__, __LINE__);
  for (int i = 0; i < launches && launched.ok(); ++i) {
    launched = Launch(c, i % layout_.copies, stream);
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended =
      began == cudaSuccess ? cudaStreamEndCapture(stream, &graph) : cudaSuccess;
  if (!launched.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return launched;
  }
  if (ended != cudaSuccess) return CudaStatus(ended, "cudaStreamEndCapture", __FILE__, __LINE__);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) return CudaStatus(made, "cudaGraphInstantiate", __FILE__, __LINE__);
  return exec;
}

absl::Status CudaGemmLauncher::PrepareSamples(int launches) {
  DestroyGraphs();
  graph_launches_ = launches;
  for (int c = 0; c < Candidates(); ++c) {
    auto exec = Capture(c, launches);
    if (!exec.ok()) return exec.status();
    graphs_.push_back(*exec);
  }
  return absl::OkStatus();
}

absl::Status CudaGemmLauncher::QueueRound(std::span<const int> order,
                                          const std::vector<cudaEvent_t>& ev) {
  CREST_CUDA(cudaEventRecord(ev[0], ctx_.stream));
  for (size_t i = 0; i < order.size(); ++i) {
    CREST_CUDA(cudaGraphLaunch(graphs_[static_cast<size_t>(order[i])], ctx_.stream));
    CREST_CUDA(cudaEventRecord(ev[i + 1], ctx_.stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> CudaGemmLauncher::Sample(std::span<const int> order) {
  std::vector<double> out;
  if (order.empty()) return out;
  auto events = ctx_.scratch->Events(order.size() + 1);
  if (!events.ok()) return events.status();
  auto flag = ctx_.scratch->HostFlag();
  if (!flag.ok()) return flag.status();
  const std::vector<cudaEvent_t>& ev = **events;
  const cudaEvent_t before = ctx_.scratch->LastMark();  // the end of the work before
  idle_before_us_.reset();
  // The stream waits on the flag while the host queues the round, so the
  // first sample does not include the host's queuing; a second at most if
  // the host stalls.
  *flag->host = 0;
  const cudaError_t held = LaunchWaitForHost(flag->device, 1'000'000'000, ctx_.stream);
  absl::Status queued = held == cudaSuccess
                            ? QueueRound(order, ev)
                            : CudaStatus(held, "LaunchWaitForHost", __FILE__, __LINE__);
  if (queued.ok()) queued = ctx_.scratch->Mark(ctx_.stream);
  std::atomic_thread_fence(std::memory_order_release);
  *flag->host = 1;  // released on every path: the stream never waits for a timeout
  if (!queued.ok()) return queued;
  CREST_CUDA(cudaEventSynchronize(ev[order.size()]));
  for (size_t i = 0; i < order.size(); ++i) {
    auto us = ElapsedUs(ev[i], ev[i + 1]);
    if (!us.ok()) return us.status();
    out.push_back(*us);
  }
  if (before != nullptr) {
    // From the end of the work before to the first sample's start: the
    // device's idle time, the host's queuing of this round included.
    auto idle = ElapsedUs(before, ev[0]);
    if (!idle.ok()) return idle.status();
    idle_before_us_ = std::max(0.0, *idle);
  }
  return out;
}

absl::StatusOr<int> CudaGemmLauncher::QueueLoad(int c, int launches) {
  // Enough to cover a second of host work with the smallest sample graphs
  // (about a millisecond each); single launches cost the host a few µs each.
  constexpr int kMaxReplays = 4096;
  constexpr int kMaxSingleLaunches = 256;
  if (launches <= 0) return 0;
  int queued = 0;
  if (!graphs_.empty()) {
    const int per = std::max(graph_launches_, 1);
    const int replays = std::min((launches + per - 1) / per, kMaxReplays);
    for (int i = 0; i < replays; ++i) {
      CREST_CUDA(cudaGraphLaunch(graphs_[static_cast<size_t>(c)], ctx_.stream));
    }
    queued = replays * per;
  } else {
    queued = std::min(launches, kMaxSingleLaunches);
    for (int i = 0; i < queued; ++i) {
      if (auto s = Launch(c, i % layout_.copies, ctx_.stream); !s.ok()) return s;
    }
  }
  if (auto s = ctx_.scratch->Mark(ctx_.stream); !s.ok()) return s;
  return queued;
}

absl::StatusOr<GemmLauncher::ReadBack> CudaGemmLauncher::RunAndRead(
    int c, std::span<const OutputIndex> elements) {
  const tuner::GemmShape& g = problem_.gemm();
  const tuner::DType out_type = tuner::OutputDType(g.dtype);
  const auto bytes = static_cast<size_t>(tuner::ElementBytes(out_type));
  auto pinned = ctx_.scratch->Pinned(elements.size() * bytes);
  if (!pinned.ok()) return pinned.status();
  auto* host = static_cast<uint8_t*>(*pinned);
  const auto* c0 = static_cast<const uint8_t*>(ctx_.arena->At(layout_.c_offset[0]));
  auto events = ctx_.scratch->Events(2);
  if (!events.ok()) return events.status();
  const std::vector<cudaEvent_t>& ev = **events;
  CREST_CUDA(cudaEventRecord(ev[0], ctx_.stream));
  // NaN in every output format: an element the GEMM does not write fails.
  CREST_CUDA(cudaMemsetAsync(ctx_.arena->At(layout_.c_offset[0]), 0xFF,
                             static_cast<size_t>(layout_.c_bytes), ctx_.stream));
  if (auto s = Launch(c, 0, ctx_.stream); !s.ok()) return s;
  CREST_CUDA(cudaEventRecord(ev[1], ctx_.stream));  // the device's part: poison and run
  for (size_t i = 0; i < elements.size(); ++i) {
    const auto offset = static_cast<size_t>(elements[i].Offset(g)) * bytes;
    CREST_CUDA(
        cudaMemcpyAsync(host + i * bytes, c0 + offset, bytes, cudaMemcpyDeviceToHost, ctx_.stream));
  }
  if (auto s = ctx_.scratch->Mark(ctx_.stream); !s.ok()) return s;
  CREST_CUDA(cudaStreamSynchronize(ctx_.stream));
  ReadBack out;
  auto us = ElapsedUs(ev[0], ev[1]);
  if (!us.ok()) return us.status();
  out.device_us = *us;
  for (size_t i = 0; i < elements.size(); ++i) {
    out.values.push_back(Unpack(host + i * bytes, out_type));
  }
  return out;
}

}  // namespace crest::measure::internal
