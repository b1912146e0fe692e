// The GPU's clock state across the GEMMs of one backend (the clock policy's
// side of the engine, docs/measurement.md): warm-up until clock and power
// settle, the reload after a short idle gap, the keep-load queued beside the
// host's work, and the burst policy's cool-downs. Device-free: the device
// comes in through GpuMonitor and EngineClock (launcher.h), so tests drive it
// with scripted readings and the recorded H100 trace.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/clock_policy.h"
#include "crest/measure/launcher.h"

namespace crest::measure {

// The engine's fixed knobs. The defaults are the documented method
// (docs/measurement.md); tests shrink the times.
struct EngineTuning {
  SettleOptions settle;
  // An idle GPU cools and boosts again: warm up again after a gap this long [s].
  double rewarm_after_idle_s = 1.0;
  // Sustained: a shorter gap (the host's work between GEMMs, a pause between
  // rounds) lets the power-cap controller recover too, so the first samples
  // after it would run faster than a training step's. A gap longer than
  // reload_after_idle_s is made up, before anything is timed, by untimed load
  // (the reload) for reload_factor times the gap, less when the readings are
  // back at the state the warm-up settled in (SM clock within
  // reload_clock_tolerance above its clock AND board power, a one-second
  // average on Hopper, within that fraction below its power: AtLoad). At
  // least one warm-up round, at most
  // max_reload_s [s].
  double reload_after_idle_s = 0.005;
  double reload_clock_tolerance = 0.01;
  double reload_factor = 3.0;
  double max_reload_s = 1.0;
  // Sustained, once settled: the host's work between a GEMM's verification
  // and the next GEMM's first launch, and while a GEMM's sample graphs are
  // built, runs beside untimed load queued before it (the keep-load: the
  // GEMM's own launches, which the device runs while the host works), so
  // the GPU does not idle in between. Its length: the same host work's
  // usual length (the median of its last keep_load_history, so one slow
  // stretch, a database checkpoint, does not make the host wait for load
  // after it) times keep_load_factor (keep_load_first_s before one was
  // timed), at most max_reload_s; what it misses, the reload makes up.
  bool keep_load = true;
  double keep_load_factor = 1.25;
  double keep_load_first_s = 0.05;
  int keep_load_history = 5;
  // Sustained: a round whose first sample started after the device idled
  // longer than reload_after_idle_s (the launcher's own measurement) is
  // discarded and taken again after a reload, at most this many times per
  // GEMM.
  int max_idle_retakes = 8;
  // Device time of one warm-up round between two readings [µs].
  double warmup_round_us = 20000;
  // Each sample runs this long at least (launches batched in one graph), so
  // launch gaps and event resolution do not pollute small kernels [µs].
  double target_sample_us = 1000;
  int max_launches_per_sample = 256;
  // Burst policy: idle this long when a sample finds the GPU out of its
  // boost state [s], at most this many times per GEMM.
  double burst_cooldown_s = 0.5;
  int max_cooldowns = 20;
  // The device's maximum SM clock (the burst reference) [MHz]; 0 unknown:
  // the clock read after a cool-down is taken instead.
  double boost_clock_mhz = 0;
};

// A reading of `monitor` stamped with `clock`'s time.
GpuReading ReadAt(GpuMonitor& monitor, EngineClock& clock);

// The stretches of host work the keep-load covers.
enum class HostWork { kBetweenGemms = 0, kGraphs = 1 };

// The GPU's clock state across the GEMMs of one backend: whether it has
// settled (sustained) or cooled (burst), the reference clock samples are
// judged by, and when the device last worked (or will have worked off the
// load queued for it).
class ClockGovernor final {
 public:
  ClockGovernor(tuner::ClockPolicy policy, EngineTuning tuning)
      : policy_(policy), tuning_(tuning) {}

  // Brings the GPU to the policy's state. Sustained: when never settled, or
  // idle longer than rewarm_after_idle_s, runs `work` (one warm-up round on
  // the device, returning its device time [µs]) until clock and power
  // settle; after a shorter gap than that but longer than
  // reload_after_idle_s, runs `work` until the readings are back at the
  // settled state (the reload; EngineTuning says when it stops). Burst: idles
  // until the clock is back at boost. Device time spent is added to
  // *kernel_us.
  absl::Status Prepare(const std::function<absl::StatusOr<double>()>& work, GpuMonitor& monitor,
                       EngineClock& clock, double* kernel_us);
  // The device worked until now; it had idled `idle_before_s` before that
  // work, too little of a load to make up for it (the next Prepare makes up
  // at least that gap).
  void MarkBusy(double now_s, double idle_before_s = 0) {
    last_busy_s_ = now_s;
    MarkIdle(idle_before_s);
  }
  // The device idled `idle_s` before work it just did (the launcher's own
  // measurement): the next Prepare makes up at least that gap.
  void MarkIdle(double idle_s) { owed_idle_s_ = std::max(owed_idle_s_, idle_s); }
  // How long the device has idled at `now_s` [s]; 0 while queued load runs.
  double IdleS(double now_s) const { return std::max(0.0, now_s - last_busy_s_); }
  // Host work of kind `what` starts. Sustained, settled and keep_load on:
  // queues its estimated length of untimed load through `queue` (asked a
  // number of launches of `launch_us` each, it returns how many it queued
  // without waiting for them) and counts the device busy until that load
  // ends. Returns the device time queued [µs] (0 when none).
  absl::StatusOr<double> KeepLoad(HostWork what, double launch_us,
                                  const std::function<absl::StatusOr<int>(int)>& queue,
                                  EngineClock& clock);
  // Host work of kind `what` is over: its length is the next estimate.
  void HostWorkDone(HostWork what, EngineClock& clock);
  tuner::ClockPolicy policy() const { return policy_; }
  // The policy with the warm-up's settled clock (sustained) or the boost
  // clock (burst) as reference.
  SampleFilter Filter() const { return SampleFilter(policy_, reference_mhz_); }
  double reference_mhz() const { return reference_mhz_; }
  // Set when the policy's state could not be reached (and what was done).
  const std::string& note() const { return note_; }
  // Reloads after a short gap so far, and their untimed load [s].
  int reloads() const { return reloads_; }
  double reload_s() const { return reload_s_; }

 private:
  absl::Status WarmUp(const std::function<absl::StatusOr<double>()>& work, GpuMonitor& monitor,
                      EngineClock& clock, double* kernel_us);
  void CoolDown(GpuMonitor& monitor, EngineClock& clock);
  absl::Status Reload(const std::function<absl::StatusOr<double>()>& work, double gap_s,
                      GpuMonitor& monitor, EngineClock& clock, double* kernel_us);
  bool BackAtLoad(const GpuReading& now) const;

  tuner::ClockPolicy policy_;
  EngineTuning tuning_;
  bool prepared_ = false;
  double last_busy_s_ = 0;
  double reference_mhz_ = 0;
  std::string note_;
  int reloads_ = 0;
  double reload_s_ = 0;
  std::optional<GpuReading> settled_;  // the warm-up's last reading
  double owed_idle_s_ = 0;
  // Per HostWork: when the stretch started (-1 none under way) and the
  // lengths of the last few [s], oldest first.
  std::array<double, 2> work_started_s_{-1, -1};
  std::array<std::vector<double>, 2> work_s_;
};

}  // namespace crest::measure
