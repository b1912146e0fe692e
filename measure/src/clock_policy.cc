#include "crest/measure/clock_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "crest/measure/sampling.h"

namespace crest::measure {

std::string DescribeReasons(uint64_t reasons) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {kReasonGpuIdle, "idle"},
      {kReasonApplicationClocks, "application-clocks"},
      {kReasonSwPowerCap, "sw-power-cap"},
      {kReasonHwSlowdown, "hw-slowdown"},
      {kReasonSyncBoost, "sync-boost"},
      {kReasonSwThermal, "sw-thermal"},
      {kReasonHwThermal, "hw-thermal"},
      {kReasonHwPowerBrake, "hw-power-brake"},
      {kReasonDisplayClocks, "display-clocks"}};
  std::string out;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((reasons & bit) == 0) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  if ((reasons & ~known) != 0) out += out.empty() ? "other" : "+other";
  return out.empty() ? "none" : out;
}

void SettleDetector::Add(const GpuReading& reading) { readings_.push_back(reading); }

double SettleDetector::ElapsedS() const {
  return readings_.empty() ? 0 : readings_.back().time_s - readings_.front().time_s;
}

std::vector<GpuReading> SettleDetector::Window(double from_s, double to_s) const {
  std::vector<GpuReading> out;
  for (const GpuReading& r : readings_) {
    if (r.time_s > from_s && r.time_s <= to_s) out.push_back(r);
  }
  return out;
}

namespace {

double MedianOf(const std::vector<GpuReading>& window, double GpuReading::*field) {
  std::vector<double> values;
  for (const GpuReading& r : window) {
    if (r.*field > 0) values.push_back(r.*field);
  }
  return Median(values);
}

}  // namespace

bool SettleDetector::Settled() const {
  if (readings_.empty() || ElapsedS() < options_.min_s) return false;
  const double now = readings_.back().time_s;
  const auto last = Window(now - options_.window_s, now);
  const auto before = Window(now - 2 * options_.window_s, now - options_.window_s);
  if (last.size() < 2 || before.empty()) return false;
  const double power = MedianOf(last, &GpuReading::power_w);
  if (power > 0) {
    double low = power;
    double high = power;
    for (const GpuReading& r : last) {
      if (r.power_w <= 0) continue;
      low = std::min(low, r.power_w);
      high = std::max(high, r.power_w);
    }
    if (high - low > options_.power_tolerance * power) return false;
  }
  const double clock = MedianOf(last, &GpuReading::sm_clock_mhz);
  const double clock_before = MedianOf(before, &GpuReading::sm_clock_mhz);
  if (clock > 0 && clock_before > 0 &&
      std::abs(clock - clock_before) > options_.clock_tolerance * clock) {
    return false;
  }
  return true;
}

bool SettleDetector::TimedOut() const { return !Settled() && ElapsedS() >= options_.max_s; }

double SettleDetector::ClockMhz() const {
  if (readings_.empty()) return 0;
  const double now = readings_.back().time_s;
  return MedianOf(Window(now - options_.window_s, now), &GpuReading::sm_clock_mhz);
}

double SettleDetector::PowerW() const {
  if (readings_.empty()) return 0;
  const double now = readings_.back().time_s;
  return MedianOf(Window(now - options_.window_s, now), &GpuReading::power_w);
}

std::string_view DiscardName(Discard why) {
  switch (why) {
    case Discard::kSlowdown:
      return "thermal or hardware slowdown";
    case Discard::kClockFarBelow:
      return "clock far below the settled clock";
    case Discard::kPowerCapped:
      return "power-capped (burst policy)";
    case Discard::kBelowBoost:
      return "clock under the boost clock (burst policy)";
    case Discard::kAfterIdle:
      return "the recovery from an idle gap";
  }
  return "?";
}

std::optional<Discard> SampleFilter::Judge(const GpuReading& r) const {
  const bool clock_known = r.sm_clock_mhz > 0 && ref_ > 0;
  if (policy_ == tuner::ClockPolicy::kSustained) {
    if (r.reasons_known && (r.reasons & kSlowdownReasons) != 0) return Discard::kSlowdown;
    if (clock_known && r.sm_clock_mhz < kSustainedFloor * ref_) return Discard::kClockFarBelow;
    return std::nullopt;
  }
  if (r.reasons_known && (r.reasons & (kSlowdownReasons | kReasonSwPowerCap)) != 0) {
    return (r.reasons & kSlowdownReasons) != 0 ? Discard::kSlowdown : Discard::kPowerCapped;
  }
  if (clock_known && r.sm_clock_mhz < kBurstFloor * ref_) return Discard::kBelowBoost;
  return std::nullopt;
}

bool AtLoad(const GpuReading& now, const GpuReading& settled, double tolerance) {
  const bool clock_known = now.sm_clock_mhz > 0 && settled.sm_clock_mhz > 0;
  const bool power_known = now.power_w > 0 && settled.power_w > 0;
  if (!clock_known && !power_known) return false;
  const bool clock_down =
      !clock_known || now.sm_clock_mhz <= settled.sm_clock_mhz * (1 + tolerance);
  const bool power_up = !power_known || now.power_w >= settled.power_w * (1 - tolerance);
  return clock_down && power_up;
}

}  // namespace crest::measure
