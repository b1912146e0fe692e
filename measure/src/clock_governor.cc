#include "crest/measure/clock_governor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "crest/common/str_cat.h"
#include "crest/measure/sampling.h"

namespace crest::measure {
namespace {

class SteadyClock final : public EngineClock {
 public:
  double NowS() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void SleepS(double seconds) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};

}  // namespace

GpuReading ReadAt(GpuMonitor& monitor, EngineClock& clock) {
  GpuReading r = monitor.Read();
  r.time_s = clock.NowS();
  return r;
}

EngineClock& SteadyEngineClock() {
  static SteadyClock clock;
  return clock;
}

absl::Status ClockGovernor::Prepare(const std::function<absl::StatusOr<double>()>& work,
                                    GpuMonitor& monitor, EngineClock& clock, double* kernel_us) {
  if (policy_ == tuner::ClockPolicy::kBurst) {
    CoolDown(monitor, clock);
    return absl::OkStatus();
  }
  const double gap_s = std::max(clock.NowS() - last_busy_s_, owed_idle_s_);
  owed_idle_s_ = 0;
  if (!prepared_ || gap_s > tuning_.rewarm_after_idle_s) {
    return WarmUp(work, monitor, clock, kernel_us);
  }
  if (gap_s > tuning_.reload_after_idle_s) return Reload(work, gap_s, monitor, clock, kernel_us);
  return absl::OkStatus();
}

absl::StatusOr<double> ClockGovernor::KeepLoad(HostWork what, double launch_us,
                                               const std::function<absl::StatusOr<int>(int)>& queue,
                                               EngineClock& clock) {
  const auto k = static_cast<size_t>(what);
  const double now = clock.NowS();
  work_started_s_[k] = now;
  if (policy_ != tuner::ClockPolicy::kSustained || !tuning_.keep_load || !prepared_ ||
      launch_us <= 0) {
    return 0.0;
  }
  const double wanted_s = std::min(
      tuning_.max_reload_s, work_s_[k].empty() ? tuning_.keep_load_first_s
                                               : tuning_.keep_load_factor * Median(work_s_[k]));
  if (wanted_s <= tuning_.reload_after_idle_s) return 0.0;  // too short to let the GPU recover
  const double launches = std::clamp(std::ceil(wanted_s * 1e6 / launch_us), 1.0, 1e6);
  auto queued = queue(static_cast<int>(launches));
  if (!queued.ok()) return queued.status();
  const double queued_us = *queued * launch_us;
  // The device works off what was queued before this load, then this load.
  last_busy_s_ = std::max(now, last_busy_s_) + queued_us / 1e6;
  return queued_us;
}

void ClockGovernor::HostWorkDone(HostWork what, EngineClock& clock) {
  const auto k = static_cast<size_t>(what);
  if (work_started_s_[k] < 0) return;
  std::vector<double>& lengths = work_s_[k];
  lengths.push_back(clock.NowS() - work_started_s_[k]);
  if (lengths.size() > static_cast<size_t>(std::max(tuning_.keep_load_history, 1))) {
    lengths.erase(lengths.begin());
  }
  work_started_s_[k] = -1;
}

bool ClockGovernor::BackAtLoad(const GpuReading& now) const {
  return AtLoad(now, *settled_, tuning_.reload_clock_tolerance);
}

absl::Status ClockGovernor::Reload(const std::function<absl::StatusOr<double>()>& work,
                                   double gap_s, GpuMonitor& monitor, EngineClock& clock,
                                   double* kernel_us) {
  const double start = clock.NowS();
  const double until = start + std::min(tuning_.max_reload_s, tuning_.reload_factor * gap_s);
  while (true) {
    auto us = work();
    if (!us.ok()) return us.status();
    *kernel_us += *us;
    if (clock.NowS() >= until) break;
    if (settled_ && BackAtLoad(ReadAt(monitor, clock))) break;
  }
  ++reloads_;
  reload_s_ += clock.NowS() - start;
  last_busy_s_ = clock.NowS();
  return absl::OkStatus();
}

absl::Status ClockGovernor::WarmUp(const std::function<absl::StatusOr<double>()>& work,
                                   GpuMonitor& monitor, EngineClock& clock, double* kernel_us) {
  SettleDetector settle(tuning_.settle);
  settle.Add(ReadAt(monitor, clock));
  while (!settle.Settled() && !settle.TimedOut()) {
    auto us = work();
    if (!us.ok()) return us.status();
    *kernel_us += *us;
    const GpuReading r = ReadAt(monitor, clock);
    settle.Add(r);
    settled_ = r;
  }
  reference_mhz_ = settle.ClockMhz();
  note_ = settle.Settled()
              ? ""
              : StrCat("clock and power did not settle within ", tuning_.settle.max_s,
                       " s of warm-up; samples are judged against the last median clock");
  prepared_ = true;
  last_busy_s_ = clock.NowS();
  return absl::OkStatus();
}

void ClockGovernor::CoolDown(GpuMonitor& monitor, EngineClock& clock) {
  // Idle until the clock is back near boost and no power cap is active.
  const double deadline = clock.NowS() + 10 * tuning_.burst_cooldown_s;
  GpuReading r = ReadAt(monitor, clock);
  const auto boost = [&] {
    return tuning_.boost_clock_mhz > 0 ? tuning_.boost_clock_mhz : r.sm_clock_mhz;
  };
  const auto cooled = [&] {
    const bool capped = r.reasons_known && (r.reasons & (kReasonSwPowerCap | kSlowdownReasons));
    return !capped &&
           (r.sm_clock_mhz <= 0 || r.sm_clock_mhz >= SampleFilter::kBurstFloor * boost());
  };
  while (!cooled() && clock.NowS() < deadline) {
    clock.SleepS(tuning_.burst_cooldown_s / 5);
    r = ReadAt(monitor, clock);
  }
  reference_mhz_ = boost();
  note_ = cooled() ? "" : "the GPU did not return to its boost clock while idle";
  prepared_ = true;
}

}  // namespace crest::measure
