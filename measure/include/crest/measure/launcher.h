// The three things the measurement pipeline needs from the world, behind
// interfaces so that every decision it makes is tested without a GPU:
// a launcher that runs one GEMM's candidate algorithms on the device, a
// monitor that reads the GPU's clocks and power, and a clock.
// measure/cuda/ implements the first two with CUDA, cuBLASLt and NVML; tests
// script them from recorded data.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/clock_policy.h"
#include "crest/measure/verification.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

// One GEMM's candidate algorithms on a device, operands in place.
class GemmLauncher {
 public:
  virtual ~GemmLauncher() = default;

  virtual int Candidates() const = 0;
  virtual const tuner::AlgoIdentity& Identity(int candidate) const = 0;
  // Runs the candidate once on every operand copy, untimed (so its kernel
  // is loaded), then once more timed: that launch's device time [µs].
  virtual absl::StatusOr<double> TimeOneLaunch(int candidate) = 0;
  // Makes each candidate's sample `launches` back-to-back launches over the
  // rotating operand copies (a CUDA graph), replayed by Sample.
  virtual absl::Status PrepareSamples(int launches) = 0;
  // One sample of each candidate in `order` (a candidate may repeat), back
  // to back on the device with no host work in between (the first does not
  // start before the last is queued): each sample's device time [µs], all
  // its launches together.
  virtual absl::StatusOr<std::vector<double>> Sample(std::span<const int> order) = 0;
  // How long the device idled before the last Sample's first sample started
  // [µs], as the device measured it; nullopt unknown.
  virtual std::optional<double> IdleBeforeLastSample() const = 0;
  // Queues about `launches` untimed launches of the candidate (replays of
  // its sample when prepared, single launches before) behind the work
  // already queued, and returns at once: how many it queued (whole sample
  // replays may round it up; a cap on single launches may cut it). Used to
  // keep the GPU loaded while the host works.
  virtual absl::StatusOr<int> QueueLoad(int candidate, int launches) = 0;
  // C at the sampled elements after one run, and that run's device time.
  struct ReadBack {
    std::vector<double> values;  // converted to double
    double device_us = 0;        // 0 unknown
  };
  // Poisons the output of copy 0, runs the candidate once on copy 0 and
  // returns C at `elements`.
  virtual absl::StatusOr<ReadBack> RunAndRead(int candidate,
                                              std::span<const OutputIndex> elements) = 0;
};

// The GPU's state now. Unknown fields are 0 (and reasons_known false);
// time_s is left for the caller to stamp.
class GpuMonitor {
 public:
  virtual ~GpuMonitor() = default;
  virtual GpuReading Read() = 0;
};

// Time for the engine: monotonic seconds, and waiting while the GPU idles.
class EngineClock {
 public:
  virtual ~EngineClock() = default;
  virtual double NowS() = 0;
  virtual void SleepS(double seconds) = 0;
};

// std::chrono::steady_clock and std::this_thread::sleep_for.
EngineClock& SteadyEngineClock();

}  // namespace crest::measure
