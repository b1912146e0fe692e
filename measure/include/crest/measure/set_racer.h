// What a measuring backend offers beside Backend when it can race a study's
// candidates (study_race.h) on its device: each candidate is a set of GEMMs,
// each GEMM run with the algorithm a sweep's per-GEMM pass chose for it
// (stored as its AlgoIdentity), so that the race times what the answer
// ranks. sweep/runner.h finds it with dynamic_cast.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/study_race.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

// A GEMM and the algorithm to run it with.
struct PinnedGemm {
  tuner::GemmShape gemm;
  tuner::AlgoIdentity algo;
};

class SetRacer {
 public:
  virtual ~SetRacer() = default;
  // Races `sets` against each other (RaceCandidates): a candidate's time is
  // the device time of its GEMMs run once each, back to back, in the
  // backend's cache mode. InvalidArgument for an algorithm the device and
  // library cannot run (the stored bytes fail cublasLtMatmulAlgoCheck);
  // `stop` (optional) is asked between timings: true ends the race with
  // Cancelled.
  virtual absl::StatusOr<StudyRaceResult> RaceSets(std::span<const std::vector<PinnedGemm>> sets,
                                                   const StudyRaceOptions& options,
                                                   const std::function<bool()>& stop) = 0;
};

}  // namespace crest::measure
