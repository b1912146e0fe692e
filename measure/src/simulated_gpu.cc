#include "crest/measure/simulated_gpu.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>
#include <string_view>

#include "crest/common/env.h"
#include "crest/common/str_cat.h"

namespace crest::measure {
namespace {

// " 1980 MHz" → 1980: the number at the field's start, units after it.
std::optional<double> Number(std::string_view field) {
  while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end == field.data() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<uint64_t> Hex(std::string_view field) {
  while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
  if (field.starts_with("0x")) field.remove_prefix(2);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value, 16);
  if (error != std::errc() || end == field.data()) return std::nullopt;
  return value;
}

}  // namespace

absl::StatusOr<std::vector<TraceRow>> LoadTrace(const std::string& path) {
  auto text = DefaultEnv().ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseTrace(*text, path);
}

absl::StatusOr<std::vector<TraceRow>> ParseTrace(std::string_view text, const std::string& path) {
  std::istringstream in{std::string(text)};
  std::vector<TraceRow> rows;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    // "2026/11/22 16:59:29.445, 1980 MHz, 81.82 W, 38, 0x0000000000000000"
    std::stringstream fields(line);
    std::string timestamp, clock, power, temperature, reasons;
    std::getline(fields, timestamp, ',');
    std::getline(fields, clock, ',');
    std::getline(fields, power, ',');
    std::getline(fields, temperature, ',');
    std::getline(fields, reasons, ',');
    if (number == 1 && timestamp.starts_with("timestamp")) continue;
    const auto mhz = Number(clock);
    const auto watts = Number(power);
    const auto bits = Hex(reasons);
    if (!mhz || *mhz <= 0 || !watts || *watts < 0 || !bits) {
      return absl::InvalidArgumentError(StrCat(
          path, ":", number,
          ": expected 'timestamp, <SM clock> MHz, <power> W, <temperature>, <reasons hex>'"));
    }
    rows.push_back({*mhz, *watts, *bits});
  }
  if (rows.empty())
    return absl::InvalidArgumentError(StrCat(path, ": the clock trace has no rows"));
  return rows;
}

absl::StatusOr<TraceLoad> FindLoad(const std::vector<TraceRow>& trace) {
  if (trace.empty()) return absl::InvalidArgumentError("the clock trace has no rows");
  const auto [least, most] = std::minmax_element(
      trace.begin(), trace.end(),
      [](const TraceRow& a, const TraceRow& b) { return a.power_w < b.power_w; });
  // Load starts where power first rises a quarter of the way to its most,
  // and lasts while it stays within 10% of it.
  const double rising = least->power_w + 0.25 * (most->power_w - least->power_w);
  const double held = 0.9 * most->power_w;
  TraceLoad load;
  const auto first = std::find_if(trace.begin(), trace.end(),
                                  [&](const TraceRow& r) { return r.power_w > rising; });
  if (first == trace.begin() || first == trace.end()) {
    return absl::InvalidArgumentError(
        "the clock trace has no idle row before its load (record it starting idle)");
  }
  load.load_row = static_cast<size_t>(first - trace.begin());
  load.idle_row = load.load_row - 1;
  load.last_row = load.load_row;
  for (size_t i = load.load_row; i < trace.size(); ++i) {
    if (trace[i].power_w >= held) load.last_row = i;
  }
  return load;
}

SimulatedGpu::SimulatedGpu(std::vector<TraceRow> trace, size_t idle_row, size_t load_row,
                           size_t last_row)
    : trace_(std::move(trace)), idle_row_(idle_row), load_row_(load_row), last_row_(last_row) {}

SimulatedGpu SimulatedGpu::Steady(double clock_mhz, double power_w) {
  return SimulatedGpu({TraceRow{clock_mhz, power_w, 0}}, 0, 0, 0);
}

SimulatedGpu SimulatedGpu::WithoutNvml() {
  SimulatedGpu gpu({TraceRow{1980, 100, 0}}, 0, 0, 0);
  gpu.nvml_ = false;
  return gpu;
}

TraceRow SimulatedGpu::Current() const {
  // The first launches after idle run at boost (791 TFLOP/s in the recorded
  // run) before the power cap bites; the 200 ms trace cannot show that, so
  // the first kBoostHoldS of load read as idle.
  if (load_s_ < kBoostHoldS) return trace_[idle_row_];
  const auto row = load_row_ + static_cast<size_t>((load_s_ - kBoostHoldS) / 0.2);
  TraceRow out = trace_[std::min(row, last_row_)];
  if (controller_.load_tau_s > 0) {
    const TraceRow& idle = trace_[idle_row_];
    out.sm_clock_mhz = idle.sm_clock_mhz + capped_ * (out.sm_clock_mhz - idle.sm_clock_mhz);
    out.power_w = idle.power_w + capped_ * (out.power_w - idle.power_w);
  }
  return out;
}

void SimulatedGpu::SleepS(double seconds) {
  slept_s_ += seconds;
  // The host sleeps (works) while the device works off its queue, 1 ms of
  // work at a time, then idles.
  const double until = now_s_ + seconds;
  while (queued_burst_us_ > 0 && now_s_ < until) {
    const double chunk = std::min(queued_burst_us_, 1000.0);
    queued_burst_us_ -= chunk;
    Work(chunk);
  }
  if (now_s_ < until) Idle(until - now_s_);
}

void SimulatedGpu::DrawPower(double seconds, double watts) {
  if (power_window_s_ <= 0 || seconds <= 0) return;
  power_.push_back({now_s_, now_s_ + seconds, watts});
  while (!power_.empty() && power_.front().end_s <= now_s_ + seconds - power_window_s_) {
    power_.pop_front();
  }
}

double SimulatedGpu::AveragedPowerW() const {
  // Time in the window that no segment covers, the GPU idled.
  const double from = now_s_ - power_window_s_;
  double joules = 0;
  double covered = 0;
  for (const PowerSegment& p : power_) {
    const double span = std::max(0.0, std::min(p.end_s, now_s_) - std::max(p.start_s, from));
    joules += span * p.watts;
    covered += span;
  }
  joules += std::max(0.0, power_window_s_ - covered) * trace_[idle_row_].power_w;
  return joules / power_window_s_;
}

void SimulatedGpu::Idle(double seconds) {
  DrawPower(seconds, trace_[idle_row_].power_w);
  now_s_ += seconds;
  load_s_ = std::max(0.0, load_s_ - 2 * seconds);
  if (controller_.idle_tau_s > 0) capped_ *= std::exp(-seconds / controller_.idle_tau_s);
}

GpuReading SimulatedGpu::Read() {
  ++reads_;
  if (read_s > 0) SleepS(read_s);
  GpuReading r;
  if (nvml_) {
    const TraceRow row = Current();
    r.sm_clock_mhz = row.sm_clock_mhz;
    r.power_w = power_window_s_ > 0 ? AveragedPowerW() : row.power_w;
    r.reasons = row.reasons;
    r.reasons_known = true;
  }
  if (tamper) tamper(r);
  return r;
}

double SimulatedGpu::Run(double burst_us) {
  if (queued_burst_us_ > 0) {
    const double queued = queued_burst_us_;
    queued_burst_us_ = 0;
    Work(queued);
  }
  return Work(burst_us);
}

double SimulatedGpu::Work(double burst_us) {
  const TraceRow now = Current();
  const double boost = trace_[idle_row_].sm_clock_mhz;
  const double clock = nvml_ ? now.sm_clock_mhz : boost;
  const double us = burst_us * boost / clock;
  if (nvml_) DrawPower(us / 1e6, now.power_w);
  now_s_ += us / 1e6;
  load_s_ += us / 1e6;
  if (controller_.load_tau_s > 0) {
    capped_ = 1 - (1 - capped_) * std::exp(-us / 1e6 / controller_.load_tau_s);
  }
  device_done_s_ = now_s_;
  return us;
}

SimulatedLauncher::SimulatedLauncher(SimulatedGpu& gpu, const tuner::GemmShape& gemm,
                                     OperandSource source, std::vector<double> burst_us,
                                     double noise, uint64_t seed)
    : gpu_(gpu),
      gemm_(gemm),
      source_(source),
      burst_us_(std::move(burst_us)),
      samples_(burst_us_.size(), 0),
      rng_(seed),
      noise_(0, noise) {
  for (size_t c = 0; c < burst_us_.size(); ++c) {
    tuner::AlgoIdentity id;
    id.algo_id = static_cast<int64_t>(c);
    id.tile_m = 128;
    id.tile_n = 256;
    ids_.push_back(id);
  }
}

double SimulatedLauncher::Launch(int c) {
  // Noise never makes a launch take no time (or less): at most 99% off.
  return gpu_.Run(burst_us_[static_cast<size_t>(c)] * std::max(0.01, 1 + noise_(rng_)));
}

absl::StatusOr<double> SimulatedLauncher::TimeOneLaunch(int c) {
  gpu_.Run(burst_us_[static_cast<size_t>(c)]);  // the untimed launch
  return Launch(c);
}

absl::Status SimulatedLauncher::PrepareSamples(int launches) {
  launches_ = launches;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> SimulatedLauncher::Sample(std::span<const int> order) {
  if (!fail_sample.ok()) return fail_sample;
  if (before_sample) before_sample();
  idle_before_us_ = gpu_.IdleS() * 1e6;
  std::vector<double> out;
  for (int c : order) {
    double us = 0;
    for (int i = 0; i < launches_; ++i) us += Launch(c);
    ++samples_[static_cast<size_t>(c)];
    out.push_back(us);
  }
  return out;
}

absl::StatusOr<int> SimulatedLauncher::QueueLoad(int c, int launches) {
  gpu_.Queue(burst_us_[static_cast<size_t>(c)] * launches);
  queued_launches_ += launches;
  return launches;
}

absl::StatusOr<GemmLauncher::ReadBack> SimulatedLauncher::RunAndRead(
    int c, std::span<const OutputIndex> elements) {
  ReadBack out;
  out.device_us = Launch(c);
  const bool is_wrong = std::find(wrong.begin(), wrong.end(), c) != wrong.end();
  for (const OutputIndex& at : elements) {
    const SampledElement e = ReferenceElement(gemm_, source_, at);
    out.values.push_back(is_wrong ? e.ref + 0.5 * e.magnitude : e.ref);
  }
  return out;
}

}  // namespace crest::measure
