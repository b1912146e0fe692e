// How the measuring engine measures: one options type for `crest sweep`,
// crestd and the "measure" section of a sweep spec (docs/sweep-spec.md), so
// the same sweep is measured the same way wherever it runs. The defaults are
// the documented method (docs/measurement.md).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

// The race of each d_ff study's leading candidates after a sweep's per-GEMM
// pass (study_race.h, sweep/runner.h): the spec's "measure": {"race": …}.
struct RaceSettings {
  bool enabled = true;
  // Candidates whose 95% interval comes within this fraction of the
  // leader's are raced (0, 0.5].
  double window = 0.03;
  int max_candidates = 8;    // the leader included [2, 32]
  double resolution = 0.01;  // tied: the ratio's interval within 1 ± this (0, 0.2]
  double max_seconds = 60;   // per study, warm-up included (0, 600]
  // The algorithm choices whose answers are raced, each its own race:
  // best (each GEMM's fastest algorithm) and/or default (cuBLASLt's first
  // choice, what a framework that does not pin algorithms runs). Each
  // once, at least one.
  std::vector<tuner::AlgoChoice> algos{tuner::AlgoChoice::kBest};
};

struct MeasureOptions {
  // Cold L2 and sustained clocks by default; part of every result's key.
  tuner::MeasureMode mode;
  // Heuristic candidates per GEMM [1, 64].
  int top_k = 8;
  // Walk the algorithms' capabilities (tile, stages, split-K, …) instead of
  // taking the heuristic's top K; capped by max_algos [1, 1024].
  bool exhaustive = false;
  int max_algos = 64;
  // The race ends when every algorithm still in it has a median whose 95%
  // confidence half-width is at most this fraction of the median (0, 0.5].
  double max_noise = 0.01;
  // Samples each algorithm gets before it may be dropped or the race may end
  // [3, 10000]. 6 is the least whose median interval reaches 95% coverage
  // (MedianIntervalCoverage); with fewer the stored interval is the samples'
  // range and says its true coverage (5: 93.75%).
  int min_samples = 6;
  // Sampling time per GEMM, all its algorithms together, at most [s]
  // (0, 600]. Warm-up and cool-down pauses do not count.
  double max_seconds = 0.25;
  RaceSettings race;
};

// OK, or InvalidArgument naming the field as the spec and the CLI spell it
// ("measure.top_k (--top-k): must be between 1 and 64 (got 0)").
absl::Status ValidateMeasureOptions(const MeasureOptions& options);

}  // namespace crest::measure
