// Test support: a measuring backend with scripted results, so sweeps write
// measurements (and answers read them) without a GPU.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "crest/tuner/backend.h"

namespace crest::testing {

// GEMM time grows with K, and K = 10944 (N = 2·10944) is fast: 100 µs, the
// rest 200 + K mod 7 µs, times `slowdown`; two algorithms each, ±1%
// intervals (FakeMeasurement). Fails GEMMs whose K is in `failing`.
class FakeMeasuringBackend final : public Backend {
 public:
  std::set<int64_t> failing;
  int runs = 0;

  std::string uuid = "GPU-fake-0";
  double slowdown = 1;  // this device's times, relative to the script
  int64_t cublaslt = 130100;  // the software it reports
  MeasureMode mode;     // what its results are keyed by
  std::vector<GemmShape> reserved;  // the plan of the last Reserve
  HostStages host;      // the engine steps each measurement reports

  std::string_view Name() const override { return "fake-gpu"; }
  bool Measures() const override { return true; }
  const GpuSpec& Gpu() const override;
  DeviceInfo Device() const override;
  SoftwareInfo Software() const override;
  MeasureMode Mode() const override { return mode; }
  absl::Status Reserve(std::span<const GemmShape> plan) override;
  absl::StatusOr<GemmOutcome> Run(const GemmShape& g) override;
};

}  // namespace crest::testing
