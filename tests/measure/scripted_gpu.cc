#include "scripted_gpu.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace crest::measure::testing {

std::vector<TraceRow> LoadTrace(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<TraceRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    // "2026/11/22 16:59:29.445, 1980 MHz, 81.82 W, 38, 0x0000000000000000"
    std::stringstream fields(line);
    std::string timestamp, clock, power, temperature, reasons;
    std::getline(fields, timestamp, ',');
    std::getline(fields, clock, ',');
    std::getline(fields, power, ',');
    std::getline(fields, temperature, ',');
    std::getline(fields, reasons, ',');
    TraceRow row;
    row.sm_clock_mhz = std::stod(clock);
    row.power_w = std::stod(power);
    row.reasons = std::stoull(reasons, nullptr, 16);
    rows.push_back(row);
  }
  EXPECT_FALSE(rows.empty()) << path;
  return rows;
}

std::vector<TraceRow> H100Trace() {
  return LoadTrace(std::string(CREST_TEST_DATA_DIR) + "/h100-2026-11-22/nvidia-smi-clock-trace.csv");
}

ScriptedGpu::ScriptedGpu(std::vector<TraceRow> trace, size_t idle_row, size_t load_row,
                         size_t last_row)
    : trace_(std::move(trace)), idle_row_(idle_row), load_row_(load_row), last_row_(last_row) {}

ScriptedGpu ScriptedGpu::WithoutNvml() {
  ScriptedGpu gpu({TraceRow{1980, 100, 0}}, 0, 0, 0);
  gpu.nvml_ = false;
  return gpu;
}

TraceRow ScriptedGpu::Current() const {
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

void ScriptedGpu::SleepS(double seconds) {
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

void ScriptedGpu::DrawPower(double seconds, double watts) {
  if (power_window_s_ <= 0 || seconds <= 0) return;
  power_.push_back({now_s_, now_s_ + seconds, watts});
  while (!power_.empty() && power_.front().end_s <= now_s_ + seconds - power_window_s_) {
    power_.pop_front();
  }
}

double ScriptedGpu::AveragedPowerW() const {
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

void ScriptedGpu::Idle(double seconds) {
  DrawPower(seconds, trace_[idle_row_].power_w);
  now_s_ += seconds;
  load_s_ = std::max(0.0, load_s_ - 2 * seconds);
  if (controller_.idle_tau_s > 0) capped_ *= std::exp(-seconds / controller_.idle_tau_s);
}

GpuReading ScriptedGpu::Read() {
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

double ScriptedGpu::Run(double burst_us) {
  if (queued_burst_us_ > 0) {
    const double queued = queued_burst_us_;
    queued_burst_us_ = 0;
    Work(queued);
  }
  return Work(burst_us);
}

double ScriptedGpu::Work(double burst_us) {
  const TraceRow now = Current();
  const double clock = nvml_ ? now.sm_clock_mhz : 1980;
  const double us = burst_us * 1980 / clock;
  if (nvml_) DrawPower(us / 1e6, now.power_w);
  now_s_ += us / 1e6;
  load_s_ += us / 1e6;
  if (controller_.load_tau_s > 0) {
    capped_ = 1 - (1 - capped_) * std::exp(-us / 1e6 / controller_.load_tau_s);
  }
  device_done_s_ = now_s_;
  return us;
}

ScriptedLauncher::ScriptedLauncher(ScriptedGpu& gpu, const GemmShape& gemm, OperandSource source,
                                   std::vector<double> burst_us, double noise, uint64_t seed)
    : gpu_(gpu),
      gemm_(gemm),
      source_(source),
      burst_us_(std::move(burst_us)),
      samples_(burst_us_.size(), 0),
      rng_(seed),
      noise_(0, noise) {
  for (size_t c = 0; c < burst_us_.size(); ++c) {
    AlgoIdentity id;
    id.algo_id = static_cast<int64_t>(c);
    id.tile_m = 128;
    id.tile_n = 256;
    ids_.push_back(id);
  }
}

double ScriptedLauncher::Launch(int c) {
  return gpu_.Run(burst_us_[static_cast<size_t>(c)] * (1 + noise_(rng_)));
}

absl::StatusOr<double> ScriptedLauncher::TimeOneLaunch(int c) {
  gpu_.Run(burst_us_[static_cast<size_t>(c)]);  // the untimed launch
  return Launch(c);
}

absl::Status ScriptedLauncher::PrepareSamples(int launches) {
  launches_ = launches;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> ScriptedLauncher::Sample(std::span<const int> order) {
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

absl::StatusOr<int> ScriptedLauncher::QueueLoad(int c, int launches) {
  gpu_.Queue(burst_us_[static_cast<size_t>(c)] * launches);
  queued_launches_ += launches;
  return launches;
}

absl::StatusOr<GemmLauncher::ReadBack> ScriptedLauncher::RunAndRead(
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

}  // namespace crest::measure::testing
