// Test support: a measuring backend with scripted results, so sweeps write
// measurements (and answers read them) without a GPU.
#pragma once

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "crest/measure/retimer.h"
#include "crest/measure/set_racer.h"
#include "crest/tuner/backend.h"

namespace crest::testing {

// GEMM time grows with K, and K = 10944 (N = 2·10944) is fast: 100 µs, the
// rest 200 + K mod 7 µs (or what `script` says), times `slowdown`; two
// algorithms each, ±1% intervals (FakeMeasurement). Fails GEMMs whose K is
// in `failing`. It races too (SetRacer): a candidate's time is the sum of
// its GEMMs' scripted times with `race_noise` (relative, seeded), on a
// device whose clock and power are steady and whose time advances with
// the kernels it runs.
// A script (FakeMeasuringBackend::script) for races: h = 4096, the up GEMM
// (K = 4096) 1000 µs, the down GEMM (K = d_ff) 1000 µs for d_ff 10920,
// 1001 for 10924 (0.05% behind on the MLP), 1016 for 10918 (0.8% behind:
// inside the pass's ±1% intervals, so tied there), 1400 for the rest (20%
// behind, outside a race's window).
double CloseLeadersScript(const tuner::GemmShape& g);

// It re-times too (Retimer): the scripted time, its first algorithm given
// the first stored identity; the stored algorithms' ids are kept.
class FakeMeasuringBackend final : public tuner::Backend,
                                   public measure::SetRacer,
                                   public measure::Retimer {
 public:
  std::set<int64_t> failing;
  int runs = 0;

  std::string uuid = "GPU-fake-0";
  double slowdown = 1;                     // this device's times, relative to the script
  int64_t cublaslt = 130100;               // the software it reports
  tuner::MeasureMode mode;                 // what its results are keyed by
  std::vector<tuner::GemmShape> reserved;  // the plan of the last Reserve
  tuner::HostStages host;                  // the engine steps each measurement reports
  std::function<double(const tuner::GemmShape&)> script;  // a GEMM's time [µs], if set
  double race_noise = 0.001;
  // cuBLASLt's first choice is the slower of the two algorithms (else the faster).
  bool first_choice_slower = false;
  // What the last race was given: per candidate, its GEMMs' algorithm ids.
  std::vector<std::vector<int64_t>> raced_algos;
  // What each Retime was given: per GEMM re-timed, its stored algorithms' ids.
  std::vector<std::vector<int64_t>> retimed_algos;

  std::string_view Name() const override { return "fake-gpu"; }
  bool Measures() const override { return true; }
  const tuner::GpuSpec& Gpu() const override;
  tuner::DeviceInfo Device() const override;
  tuner::SoftwareInfo Software() const override;
  tuner::MeasureMode Mode() const override { return mode; }
  absl::Status Reserve(std::span<const tuner::GemmShape> plan) override;
  absl::StatusOr<tuner::GemmOutcome> Run(const tuner::GemmShape& g) override;
  absl::StatusOr<measure::StudyRaceResult> RaceSets(
      std::span<const std::vector<measure::PinnedGemm>> sets,
      const measure::StudyRaceOptions& options, const std::function<bool()>& stop) override;
  absl::StatusOr<tuner::GemmOutcome> Retime(const tuner::GemmShape& g,
                                            std::span<const tuner::AlgoIdentity> stored) override;

 private:
  double TimeOf(const tuner::GemmShape& g) const;
};

}  // namespace crest::testing
