// How the rankings ask for times: the timers' signatures alone. A ranking's
// header names them without the types' definitions (timing.h), so that an
// edit of a time's fields recompiles the files that read them, not every
// file that includes a ranking.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/gemm.h"

namespace crest::tuner {

struct Timing;  // timing.h
struct SetSum;  // timing.h

// Times one GEMM.
using GemmTimer = std::function<absl::StatusOr<Timing>(const GemmShape&)>;

// Times GEMMs that belong together: one Timing per GEMM, in the order
// given. An answering source gives every measured Timing of one call from
// one run (or one pool of runs). NotFound: nothing answers the set.
using GemmSetTimer = std::function<absl::StatusOr<std::vector<Timing>>(std::span<const GemmShape>)>;

// The sum of a set's times: exactly SumTimings(timer(set)) of the source's
// GemmSetTimer (TimingOf it), for a source that can give it without a
// Timing per GEMM, and without a copy of its labels per set.
using GemmSetSummer = std::function<absl::StatusOr<SetSum>(std::span<const GemmShape>)>;

}  // namespace crest::tuner
