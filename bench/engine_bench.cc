// The engine's host work per GEMM, side by side in one run:
//  - new: the device-free pipeline (sizing, warm-up bookkeeping, the race,
//    summaries, the verification references from the generator) driving a
//    null device whose launches cost nothing and whose times are scripted
//    from the predictor; no CUDA call is made, so this is the pipeline's own
//    cost on this machine, not a GPU figure (cuBLASLt's heuristic query,
//    graph capture and the database write come on top on a GPU node);
//  - old: what the first engine did on the host before every GEMM: draw A
//    and B with std::mt19937_64, round them to bf16 and pack them (the copy
//    to the device not counted).
// Usage: engine_bench [--old-gemms N] (default 3; the old way is slow).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "crest/measure/pipeline.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/predictor.h"

namespace {

using crest::tuner::GemmShape;
using namespace crest::measure;  // NOLINT(build/namespaces): a benchmark's main file

double NowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Device time passes only when the null device "runs" something.
class ScriptedClock final : public EngineClock, public GpuMonitor {
 public:
  double NowS() override { return now_s; }
  void SleepS(double seconds) override { now_s += seconds; }
  GpuReading Read() override { return {0, 1455, 690, kReasonSwPowerCap, true}; }
  double now_s = 0;
};

class NullDevice final : public GemmLauncher {
 public:
  NullDevice(ScriptedClock& clock, double us, int candidates) : clock_(clock) {
    for (int c = 0; c < candidates; ++c) {
      us_.push_back(us * (1 + 0.04 * c));
      ids_.emplace_back();
    }
  }
  int Candidates() const override { return static_cast<int>(us_.size()); }
  const crest::tuner::AlgoIdentity& Identity(int c) const override { return ids_[Index(c)]; }
  absl::StatusOr<double> TimeOneLaunch(int c) override { return Run(us_[Index(c)]); }
  absl::Status PrepareSamples(int launches) override {
    launches_ = launches;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<double>> Sample(std::span<const int> order) override {
    std::vector<double> out;
    for (int c : order) out.push_back(Run(us_[Index(c)] * launches_ * (1 + noise_(rng_))));
    return out;
  }
  absl::StatusOr<ReadBack> RunAndRead(int, std::span<const OutputIndex> elements) override {
    return ReadBack{std::vector<double>(elements.size(), 0.0), 0};
  }
  // The bench times the engine's host work alone: no device to keep loaded.
  std::optional<double> IdleBeforeLastSample() const override { return std::nullopt; }
  absl::StatusOr<int> QueueLoad(int, int) override { return 0; }

 private:
  static size_t Index(int c) { return static_cast<size_t>(c); }
  double Run(double us) {
    clock_.now_s += us / 1e6;
    return us;
  }
  ScriptedClock& clock_;
  std::vector<double> us_;
  std::vector<crest::tuner::AlgoIdentity> ids_;
  int launches_ = 1;
  std::mt19937_64 rng_{1};
  std::normal_distribution<double> noise_{0, 0.01};
};

std::vector<GemmShape> Plan(bool train) {
  crest::tuner::DffQuery q;
  q.dff.hidden = 4096;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  q.train = train;
  auto plan = crest::tuner::PlanDff(q);
  std::vector<GemmShape> out;
  if (!plan.ok()) return out;
  for (const auto& gemms : plan->gemms) out.insert(out.end(), gemms.begin(), gemms.end());
  return out;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

// The new pipeline over a plan; returns host seconds per GEMM.
std::vector<double> RunPipeline(const std::vector<GemmShape>& plan) {
  const crest::tuner::GpuSpec& h100 = **crest::tuner::FindGpu("h100");
  ScriptedClock clock;
  EngineTuning tuning;
  ClockGovernor governor(crest::tuner::ClockPolicy::kSustained, tuning);
  MeasureOptions options;
  std::vector<double> host_s;
  for (const GemmShape& g : plan) {
    const double device_us = crest::tuner::Predict(g, h100)->time_us;
    NullDevice device(clock, device_us, options.top_k);
    const double start = NowS();
    auto m = MeasureGemm(g, options, {{7, 0, g.batch * g.m * g.k}, 1}, device, clock, clock,
                         governor, tuning);
    host_s.push_back(NowS() - start);
    if (!m.ok()) std::cerr << "pipeline failed: " << m.status() << "\n";
  }
  return host_s;
}

// What the first engine did on the host per GEMM: A and B drawn, rounded
// to bf16 and packed. Returns seconds.
double OldHostOperands(const GemmShape& g) {
  const double start = NowS();
  std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(g.m * 31 + g.n * 17 + g.k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const int64_t elements : {g.batch * g.m * g.k, g.batch * g.k * g.n}) {
    std::vector<float> values(static_cast<size_t>(elements));
    for (float& x : values) {
      uint32_t bits;
      const float v = uniform(rng);
      std::memcpy(&bits, &v, 4);
      bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;  // round to bf16
      std::memcpy(&x, &bits, 4);
    }
    std::vector<uint8_t> packed(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &values[i], 4);
      const auto half = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&packed[2 * i], &half, 2);
    }
    if (packed[packed.size() / 2] == 0xAB && packed[0] == 0xCD) std::cerr << "";  // keep it
  }
  return NowS() - start;
}

}  // namespace

int main(int argc, char** argv) {
  int old_gemms = 3;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--old-gemms") old_gemms = std::max(1, std::atoi(argv[i + 1]));
  }
  std::cout << "engine host work per GEMM, h=4096 SwiGLU MLP d_ff window +/-128, bf16, 8192 "
               "tokens, heuristic top 8 (null device: no CUDA calls; see the header)\n";
  for (const bool train : {false, true}) {
    const auto plan = Plan(train);
    const auto host = RunPipeline(plan);
    double total = 0;
    for (double s : host) total += s;
    std::cout << (train ? "train" : "fwd  ") << " plan " << plan.size()
              << " GEMMs: pipeline host p50 " << 1e3 * Percentile(host, 0.5) << " ms, p95 "
              << 1e3 * Percentile(host, 0.95) << " ms, max " << 1e3 * Percentile(host, 1.0)
              << " ms, total " << total << " s\n";
  }
  const auto fwd = Plan(false);
  std::vector<double> old_s;
  std::vector<double> new_s;
  for (int i = 0; i < old_gemms && i < static_cast<int>(fwd.size()); ++i) {
    const GemmShape& g = fwd[static_cast<size_t>(i) * 2 % fwd.size()];
    old_s.push_back(OldHostOperands(g));
    new_s.push_back(RunPipeline({g}).front());
  }
  double old_mean = 0;
  double new_mean = 0;
  for (size_t i = 0; i < old_s.size(); ++i) {
    old_mean += old_s[i] / static_cast<double>(old_s.size());
    new_mean += new_s[i] / static_cast<double>(new_s.size());
  }
  std::cout << "side by side on the same " << old_s.size() << " GEMMs: old host operand generation "
            << 1e3 * old_mean << " ms per GEMM, new pipeline host work " << 1e3 * new_mean
            << " ms per GEMM, ratio " << old_mean / new_mean << "x\n";
  return 0;
}
