// Internal: the race of a study's candidates on a CUDA device
// (crest/measure/set_racer.h): each GEMM of each candidate gets one
// launcher with its one pinned algorithm, its sample a graph of one launch
// per operand copy, and a candidate's time is the sum of its GEMMs' times
// per launch.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/set_racer.h"
#include "cuda_launcher.h"
#include "device_arena.h"

namespace crest::measure::internal {

struct PinnedRaceDevice {
  LaunchContext context;  // handle, stream, the sweep's arena, scratch
  int64_t l2_bytes = 0;
  tuner::CacheMode cache = tuner::CacheMode::kCold;
  int64_t workspace_bytes = 0;
  ArenaPlan plan;  // for every GEMM of the sets (the backend's PlanFor)
};

absl::StatusOr<StudyRaceResult> RacePinnedSets(const PinnedRaceDevice& device,
                                               std::span<const std::vector<PinnedGemm>> sets,
                                               const StudyRaceOptions& options,
                                               const std::function<bool()>& stop,
                                               GpuMonitor& monitor, EngineClock& clock);

}  // namespace crest::measure::internal
