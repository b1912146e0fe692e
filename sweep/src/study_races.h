// Internal to crest::sweep: after a measuring sweep's per-GEMM pass, each
// d_ff study's leading candidates are raced against each other on the
// device (measure/set_racer.h) and the race is stored, for the d_ff answer
// to order them by (DffRanking::race).
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "crest/store/store.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/backend.h"

namespace crest::sweep::internal {

struct RaceContext {
  int64_t device_id = 0;  // the backend's device and software in the store
  int64_t software_id = 0;
  std::function<bool()> stop;                      // cancel or interrupt
  std::function<void(std::string_view)> on_stage;  // progress, in words
};

// Races every study of `spec.dff` whose measured answer on this device has
// at least two candidates within spec.measure.race.window of the leader.
// A study that is not raced says why; errors of the store end the phase.
absl::StatusOr<std::vector<StudyRaceReport>> RaceStudies(const SweepSpec& spec,
                                                         tuner::Backend& backend, store::Store& db,
                                                         const RaceContext& context);

}  // namespace crest::sweep::internal
