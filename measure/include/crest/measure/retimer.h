// What a measuring backend offers beside Backend when it can time a GEMM
// with given algorithms instead of searching (a revalidation after a
// software upgrade: sweep/runner.h). sweep/runner.h finds it with
// dynamic_cast.
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

class Retimer {
 public:
  virtual ~Retimer() = default;
  // Times `gemm` with the library's first choice now (heuristic_rank 0) and
  // each of `stored` (algorithms another software version stored; those the
  // library no longer accepts are left out), through the same pipeline as
  // Backend::Run: sampling, clock policy, verification. The result lists
  // every algorithm timed; InvalidArgument when none can run.
  virtual absl::StatusOr<tuner::GemmOutcome> Retime(
      const tuner::GemmShape& gemm, std::span<const tuner::AlgoIdentity> stored) = 0;
};

}  // namespace crest::measure
