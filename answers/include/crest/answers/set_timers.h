// For implementations of Answers (answers.h): the d_ff, vocabulary and
// design answers computed from a pair of set timers, so that every
// implementation ranks the same way and only says where times come from.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/design.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gemm_sets.h"
#include "crest/tuner/vocab.h"

namespace crest::answers {

// A set of timers serves one thread at a time (the sources keep what they
// read or made for the next set).
struct SetTimers {
  // The answering source: measured where it can (one run per set, or a
  // pool), else predicted.
  tuner::GemmSetTimer time;
  // The model alone (for a baseline of the predicted kind); may be empty
  // when `time` is the model.
  tuner::GemmSetTimer predict;
  // Optional: `time`'s sums (SumTimings of its answer), for a source that
  // gives them without a Timing per GEMM, each run's (or model version's)
  // labels shared by its sums; the d_ff answer uses it.
  tuner::GemmSetSummer sum;
  // Optional: reads what the sets will need, before they are timed.
  std::function<absl::Status(const tuner::GemmSets&)> prefetch;
  // Optional: how many sets `time` answered predicted although every GEMM
  // was measured, by no one run (DffRanking::measured_across_runs).
  std::function<int64_t()> across_runs;
  // Optional: the race that orders a d_ff answer's leading measured rows
  // (RankDff).
  tuner::DffRaceFinder races;
};

// The d_ff ranking of `query` (skip_missing set: candidates the model has
// no path for are counted missing). FailedPrecondition when no candidate
// has an answer, naming the dtype and the GPU.
absl::StatusOr<tuner::DffRanking> RankDffWith(const tuner::DffQuery& query,
                                              const tuner::GpuSpec& gpu, const SetTimers& timers);
absl::StatusOr<tuner::VocabRanking> RankVocabWith(const tuner::VocabQuery& query,
                                                  const SetTimers& timers);
// Every config evaluated on `gpu` (its fused attention and communication
// too, whatever options.gpu says), then ranked (RankDesigns).
absl::StatusOr<std::vector<tuner::DesignRow>> RankDesignsWith(
    std::span<const tuner::DesignConfig> configs, const tuner::DesignOptions& options,
    const tuner::GpuSpec& gpu, const SetTimers& timers);

}  // namespace crest::answers
