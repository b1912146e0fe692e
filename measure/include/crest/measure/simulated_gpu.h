// A simulated GPU, scripted from recorded data: an `nvidia-smi` clock trace
// (the recorded H100's is tests/data/h100-2026-11-22/) gives clock, power and
// reasons as a function of how long the GPU has been under load; kernels run
// slower at lower clocks; idling cools the GPU back to boost. The launcher,
// monitor and clock of launcher.h all read this one model, so time, load
// and readings stay consistent. Time is simulated: sleeping advances it at
// once. The measurement tests drive the pipeline with it, and the replay
// backend (sweep/) times recorded tables on it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/launcher.h"

namespace crest::measure {

struct TraceRow {
  double sm_clock_mhz = 0;
  double power_w = 0;
  uint64_t reasons = 0;
};

// The rows of an `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,
// temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader` file,
// 200 ms apart. InvalidArgument names the file and line of a malformed row
// (a header line is skipped); NotFound when it cannot be read.
absl::StatusOr<std::vector<TraceRow>> LoadTrace(const std::string& path);
// The same, from the file's text (`path` names it in errors).
absl::StatusOr<std::vector<TraceRow>> ParseTrace(std::string_view text, const std::string& path);

// Where a trace's load starts and ends: the rows drawing more than halfway
// from its least to its most power. InvalidArgument when the trace has no
// idle row before its load (its first row is already under load).
struct TraceLoad {
  size_t idle_row = 0;  // the last row before the load
  size_t load_row = 0;
  size_t last_row = 0;
};
absl::StatusOr<TraceLoad> FindLoad(const std::vector<TraceRow>& trace);

class SimulatedGpu final : public GpuMonitor, public EngineClock {
 public:
  // `trace`: rows 200 ms apart; `load_row` is the first row under load and
  // `idle_row` the reading of an idle GPU. Load time advances with kernel
  // time and falls twice as fast while idle.
  SimulatedGpu(std::vector<TraceRow> trace, size_t idle_row, size_t load_row, size_t last_row);
  SimulatedGpu(std::vector<TraceRow> trace, TraceLoad load)
      : SimulatedGpu(std::move(trace), load.idle_row, load.load_row, load.last_row) {}
  // A GPU that always reads `clock_mhz` and `power_w` and runs every kernel
  // in its given time (no drift).
  static SimulatedGpu Steady(double clock_mhz, double power_w);
  // A GPU whose readings are all unknown (no NVML) and whose clock never moves.
  static SimulatedGpu WithoutNvml();

  double NowS() override { return now_s_; }
  void SleepS(double seconds) override;
  GpuReading Read() override;

  // Runs work of `burst_us` (its time at the boost clock) once the work
  // queued before it is done (the host waits for both), and returns how long
  // it took at the clock of the moment [µs].
  double Run(double burst_us);
  // Queues work of `burst_us` and returns at once: the device runs it while
  // the host sleeps (works), or before the next Run.
  void Queue(double burst_us) { queued_burst_us_ += burst_us; }
  // How long the device has idled now [s] (0 while queued work remains).
  double IdleS() const { return queued_burst_us_ > 0 ? 0 : now_s_ - device_done_s_; }
  // The power-cap controller, when set (both > 0): under load the clock
  // falls from the idle reading to the trace's with time constant
  // load_tau_s; idle, it recovers towards the idle reading with time
  // constant idle_tau_s, so that even a short pause lets the next kernels
  // run faster, as an H100 under its power cap does. Power follows the same
  // state. The constants are the test's assumptions, not measurements: the
  // 200 ms trace cannot resolve them.
  struct Controller {
    double load_tau_s = 0;
    double idle_tau_s = 0;
  };
  void SetController(Controller c) { controller_ = c; }
  // Readings report power as NVML does on Hopper when `window_s` > 0: the
  // average of the instantaneous power over the last window_s (1 s), so
  // after an idle gap the reading lags the clock. 0: the instantaneous power.
  void AveragePower(double window_s) { power_window_s_ = window_s; }
  // Overrides the readings (e.g. thermal slowdown in some window).
  std::function<void(GpuReading&)> tamper;
  double read_s = 0;  // host time a reading takes (the GPU idles meanwhile)
  int64_t reads() const { return reads_; }
  double load_s() const { return load_s_; }
  double slept_s() const { return slept_s_; }

 private:
  static constexpr double kBoostHoldS = 0.05;
  TraceRow Current() const;
  double Work(double burst_us);  // runs it now, whatever is queued
  void Idle(double seconds);
  void DrawPower(double seconds, double watts);  // history for AveragePower
  double AveragedPowerW() const;
  Controller controller_;
  double power_window_s_ = 0;
  struct PowerSegment {
    double start_s = 0;
    double end_s = 0;
    double watts = 0;
  };
  std::deque<PowerSegment> power_;  // oldest first
  double capped_ = 1;  // the controller's state: 0 at the idle reading, 1 at the trace's
  std::vector<TraceRow> trace_;
  size_t idle_row_ = 0;
  size_t load_row_ = 0;
  size_t last_row_ = 0;
  bool nvml_ = true;
  double now_s_ = 1000;
  double load_s_ = 0;
  double slept_s_ = 0;
  double queued_burst_us_ = 0;
  int64_t reads_ = 0;
  double device_done_s_ = 0;
};

// A launcher on the simulated GPU: candidate c takes burst_us[c] per launch
// at the boost clock (the trace's idle reading), with multiplicative normal
// noise of standard deviation `noise` (a launch keeps at least 1% of its
// time however far the noise falls). Its outputs are the true products of
// the generated operands, except for candidates listed in `wrong`, which
// return garbage (`wrong`, `before_sample` and `fail_sample` are faults
// tests inject).
class SimulatedLauncher final : public GemmLauncher {
 public:
  SimulatedLauncher(SimulatedGpu& gpu, const tuner::GemmShape& gemm, OperandSource source,
                    std::vector<double> burst_us, double noise = 0.005, uint64_t seed = 1);

  int Candidates() const override { return static_cast<int>(burst_us_.size()); }
  const tuner::AlgoIdentity& Identity(int c) const override { return ids_[static_cast<size_t>(c)]; }
  // Replaces candidate c's identity (by default algo_id c, tile 128×256).
  void Identify(int c, tuner::AlgoIdentity id) { ids_[static_cast<size_t>(c)] = std::move(id); }
  absl::StatusOr<double> TimeOneLaunch(int c) override;
  absl::Status PrepareSamples(int launches) override;
  absl::StatusOr<std::vector<double>> Sample(std::span<const int> order) override;
  absl::StatusOr<ReadBack> RunAndRead(int c, std::span<const OutputIndex> elements) override;

  std::vector<int> wrong;
  std::function<void()> before_sample;          // called as each Sample starts
  absl::Status fail_sample = absl::OkStatus();  // returned by Sample when set
  std::optional<double> IdleBeforeLastSample() const override { return idle_before_us_; }
  absl::StatusOr<int> QueueLoad(int c, int launches) override;

  int launches() const { return launches_; }
  int64_t queued_launches() const { return queued_launches_; }
  int64_t samples_of(int c) const { return samples_[static_cast<size_t>(c)]; }

 private:
  double Launch(int c);
  SimulatedGpu& gpu_;
  tuner::GemmShape gemm_;
  OperandSource source_;
  std::vector<double> burst_us_;
  std::vector<tuner::AlgoIdentity> ids_;
  std::vector<int64_t> samples_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_;
  int launches_ = 0;
  std::optional<double> idle_before_us_;
  int64_t queued_launches_ = 0;
};

}  // namespace crest::measure
