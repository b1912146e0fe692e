#include "fake_backend.h"

#include <random>

#include "fake_results.h"

namespace crest::testing {

const tuner::GpuSpec& FakeMeasuringBackend::Gpu() const { return **tuner::FindGpu("h100"); }
tuner::DeviceInfo FakeMeasuringBackend::Device() const { return FakeH100(uuid); }
tuner::SoftwareInfo FakeMeasuringBackend::Software() const { return FakeSoftware(cublaslt); }

absl::Status FakeMeasuringBackend::Reserve(std::span<const tuner::GemmShape> plan) {
  reserved.assign(plan.begin(), plan.end());
  return absl::OkStatus();
}

double CloseLeadersScript(const tuner::GemmShape& g) {
  if (g.k == 4096) return 1000;  // up
  switch (g.k) {
    case 10920:
      return 1000;
    case 10924:
      return 1001;
    case 10918:
      return 1016;
    default:
      return 1400;
  }
}

double FakeMeasuringBackend::TimeOf(const tuner::GemmShape& g) const {
  if (script) return script(g) * slowdown;
  const double us = (g.k == 10944 || g.n == 2 * 10944) ? 100 : 200 + static_cast<double>(g.k % 7);
  return us * slowdown;
}

absl::StatusOr<tuner::GemmOutcome> FakeMeasuringBackend::Run(const tuner::GemmShape& g) {
  ++runs;
  if (failing.contains(g.k)) return absl::ResourceExhaustedError("out of device memory");
  tuner::GemmOutcome out;
  out.measured = FakeMeasurement(g, TimeOf(g), 2);
  if (first_choice_slower) {
    out.measured->algos[0].heuristic_rank = 1;
    out.measured->algos[1].heuristic_rank = 0;
  }
  out.measured->mode = mode;
  out.measured->host = host;
  return out;
}

absl::StatusOr<tuner::GemmOutcome> FakeMeasuringBackend::Retime(
    const tuner::GemmShape& g, std::span<const tuner::AlgoIdentity> stored) {
  std::vector<int64_t>& ids = retimed_algos.emplace_back();
  for (const tuner::AlgoIdentity& a : stored) ids.push_back(a.algo_id);
  auto out = Run(g);
  if (!out.ok() || stored.empty()) return out;
  tuner::AlgoResult& first = out->measured->algos[0];
  first.algo = stored.front();
  first.heuristic_rank = -1;
  return out;
}

namespace {

// A device at its settled state: steady readings, time moving with work.
class SteadyDevice final : public measure::GpuMonitor,
                           public measure::EngineClock,
                           public measure::CandidateTimer {
 public:
  SteadyDevice(std::vector<double> times_us, double noise, const std::function<bool()>& stop)
      : times_us_(std::move(times_us)), noise_(0.0, noise), stop_(stop) {}
  measure::GpuReading Read() override {
    measure::GpuReading r;
    r.sm_clock_mhz = 1455;
    r.power_w = 690;
    return r;
  }
  double NowS() override { return now_s_; }
  void SleepS(double seconds) override { now_s_ += seconds; }
  int Candidates() const override { return static_cast<int>(times_us_.size()); }
  absl::StatusOr<double> Time(int c) override {
    if (stop_ && stop_()) return absl::CancelledError("the race was stopped");
    const double us = times_us_[static_cast<size_t>(c)] * (1 + noise_(random_));
    now_s_ += us / 1e6;
    return us;
  }

 private:
  std::vector<double> times_us_;
  std::normal_distribution<double> noise_;
  std::mt19937_64 random_{7};
  const std::function<bool()>& stop_;
  double now_s_ = 100;
};

}  // namespace

absl::StatusOr<measure::StudyRaceResult> FakeMeasuringBackend::RaceSets(
    std::span<const std::vector<measure::PinnedGemm>> sets,
    const measure::StudyRaceOptions& options, const std::function<bool()>& stop) {
  std::vector<double> times;
  raced_algos.clear();
  for (const auto& set : sets) {
    double us = 0;
    std::vector<int64_t>& algos = raced_algos.emplace_back();
    for (const measure::PinnedGemm& p : set) {
      us += TimeOf(p.gemm);
      algos.push_back(p.algo.algo_id);
    }
    times.push_back(us);
  }
  SteadyDevice device(std::move(times), race_noise, stop);
  return measure::RaceCandidates(device, device, device, options);
}

}  // namespace crest::testing
