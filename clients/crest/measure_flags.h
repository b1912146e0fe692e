// Internal to the crest CLI: the measuring engine's flags, and the two
// things the CLI asks of the CUDA build (built or not).
#pragma once

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "crest/tuner/backend.h"
#include "nlohmann/json.hpp"

namespace crest::cli {

struct MeasureFlags {
  int device = 0;
  int top_k = 8;
  bool exhaustive = false;
  int max_algos = 64;
  bool warm = false;
  double max_noise = 0.01;
  int min_samples = 10;
  double max_seconds = 0.5;
};

void AddMeasureFlags(CLI::App& app, MeasureFlags& flags);

// The cuBLASLt backend, or FailedPrecondition: not built, or no device.
absl::StatusOr<std::unique_ptr<Backend>> MakeMeasuringBackend(const MeasureFlags& flags);

// What `crest info` reports: backends built in and devices found.
nlohmann::json BackendsAndDevices();

}  // namespace crest::cli
