// Internal to crest::answers: how the model alone times sets of GEMMs.
#pragma once

#include "crest/answers/set_timers.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::answers::internal {

// The model's timers for `gpu` (which must outlive them): `time` predicts
// each GEMM (NotFound for a GEMM the model has no path for: the candidate is
// missing), and `sum` gives exactly SumTimings(time(set)) without a Timing
// per GEMM, so a ranking copies the model version once a candidate.
SetTimers ModelTimers(const tuner::GpuSpec& gpu);

}  // namespace crest::answers::internal
