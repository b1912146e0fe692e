// Internal: the replay backend (`crest sweep --backend replay`). It times
// GEMMs from a recorded table (the CSV `crest db import` reads) on a
// simulated GPU (crest/measure/simulated_gpu.h), through the measuring
// engine's own pipeline: sample sizing, clock policy, the algorithm race,
// verification, and the study race after the per-GEMM pass. Each launch
// takes the table's time for its GEMM × seeded normal noise × (with a clock
// trace) the trace's drift. Its results are stored as the runs of a replay
// device (DeviceInfo::replay says the file, its hash, the noise, seed and
// trace), so every answer built on them says "replayed", never "measured".
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "crest/sweep/backend_factory.h"
#include "crest/tuner/backend.h"

namespace crest::sweep::internal {

// InvalidArgument for a bad option (naming --replay-noise, …) or table;
// NotFound when the table or trace cannot be read.
absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeReplayBackend(const BackendChoice& choice);

}  // namespace crest::sweep::internal
