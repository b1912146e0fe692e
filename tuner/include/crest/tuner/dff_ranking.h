// Ranks d_ff candidates by the time of the whole SwiGLU MLP. Each
// candidate's GEMMs are timed together by an injected set timer (the model,
// or a result store answering from one run), ranked by ranking.h's rule.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/candidates.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/dff_query.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/race_standing.h"
#include "crest/tuner/ranking.h"
#include "crest/tuner/source.h"
#include "crest/tuner/timers.h"

namespace crest::tuner {

struct DffRow {
  int64_t d_ff = 0;
  double time_us = 0;      // whole MLP, all GEMMs summed
  double time_low_us = 0;  // the interval time_us is known within (= time_us when exact)
  double time_high_us = 0;
  int tie_group = 0;  // ranking.h: rows of one group cannot be told apart; 1 = the best's
  double tflops = 0;
  // The baseline's time / this time. The baseline's time is of this row's
  // kind where the answer has it, else predicted (speedup_basis says which);
  // 0 only when the baseline has no answer at all.
  double speedup_vs_baseline = 0;
  Source speedup_basis = Source::kUnknown;
  int64_t mlp_params = 0;    // 3·h·d_ff / t
  int64_t params_delta = 0;  // against the baseline
  Source source = Source::kPredicted;
  std::string provenance;
  DeviceInfo device;          // measured rows
  SoftwareInfo software;      // measured rows
  std::vector<RunInfo> runs;  // measured rows: the run, or the runs pooled
  bool pooled = false;
  // Set when the answer's race (DffRanking::race) timed this candidate: its
  // verdict ("leader", "tied", "slower", "unresolved") and the geometric
  // mean of its paired ratios to the race's leader with their 95% interval.
  std::string race_verdict;
  double race_ratio = 0;
  double race_ratio_low = 0;
  double race_ratio_high = 0;
};

// The race that ordered an answer's leading measured rows (sweep/runner.h):
// the candidates within a few percent of the leader after the run's
// per-GEMM pass, timed again against each other in interleaved rounds.
struct DffRaceInfo {
  int64_t race_id = 0;
  RunInfo run;  // the run whose candidates and algorithms it raced
  int candidates = 0;
  int rounds = 0;
  int retaken = 0;        // timings retaken after an idle gap
  double resolution = 0;  // ties: ratio intervals within 1 ± this
  // The family-wise error rate its verdicts hold at; 0: a race of the first
  // procedure (uncorrected 95% tests round by round), at no stated rate.
  double error_rate = 0;
  double seconds = 0;       // on the device, warm-up included
  bool settled = false;     // the warm-up reached a settled clock and power
  std::string stop_reason;  // "resolved", "round budget", "time budget"
  int64_t created_us = 0;
};

struct DffRanking {
  DffCandidates candidates;
  DffRow baseline;  // time_us 0 when !baseline_found
  bool baseline_found = false;
  // The baseline predicted, for rows of a kind the baseline's answer is not
  // (0 when the baseline is predicted itself or the model has no path).
  double predicted_baseline_us = 0;
  // Ranked by RankWithTies (ranking.h): the headline best first, then its
  // kind's rows, then the other kinds (measured, mixed, predicted). `top`
  // keeps that many rows of each kind.
  std::vector<DffRow> rows;
  Source headline = Source::kUnknown;  // rows.front().source when rows is not empty
  int64_t tied_with_best = 0;          // rows (of all evaluated, not only `top`) in tie group 1
  int64_t evaluated = 0;               // candidates timed
  int64_t measured = 0;                // of those, answered from measurements
  int64_t predicted = 0;               // … from predictions
  int64_t replayed = 0;                // … from replayed runs (the replay backend's)
  int64_t missing = 0;                 // candidates with no answer (skip_missing)
  // Of the predicted: candidates whose every GEMM was measured, but by no
  // one run (pooling runs would answer them measured).
  int64_t measured_across_runs = 0;
  // The runs measured rows come from, each once, in order of first use.
  std::vector<RunInfo> runs;
  // Set when a race of the headline's run ordered the leading measured rows:
  // they come first in the race's order, tie group 1 is the race's (the
  // leader and every candidate it could not be told from at the race's
  // resolution), and the rows it did not time follow.
  std::optional<DffRaceInfo> race;
  // Why a race of this study was not used, when one exists but does not
  // apply (rows from another run, pooled runs); empty otherwise.
  std::string race_note;
};

// A stored race of a study's candidates, as the ranking uses it.
struct DffRace {
  DffRaceInfo info;
  // Each raced d_ff (its value), leader first, then by group and ratio.
  std::vector<RaceStanding> standings;
};
// Finds the race that `run` (the measured headline's run) made of the
// query's study; nullopt when it made none.
using DffRaceFinder = std::function<absl::StatusOr<std::optional<DffRace>>(const RunInfo& run)>;

// Whether `row` is measured whole by `run` alone (not pooled, not
// predicted): the rows a race of that run may time and order.
bool MeasuredByRun(const DffRow& row, const RunInfo& run);

// Orders `rows` (ranked by RankWithTies) by `race`: the raced rows lead
// their kind's block in the race's order, in the race's tie groups, the
// rest follow in their order; groups are renumbered in listing order.
// Returns "" when applied, else why the race does not apply (a raced
// candidate answered by another run, or a candidate tied with the best in
// the ranking that the race did not time), leaving `rows` as they were.
std::string ApplyRace(const DffRace& race, std::vector<DffRow>& rows);

// Ranks `plan` (made by PlanDff from the same query): `timer` times each
// candidate's GEMMs together; `predict` (optional) is the model alone, for
// a predicted baseline where the baseline's answer is of another kind than a
// row's; `races` (optional) finds the race of the measured headline's run,
// which then orders the leading measured rows (ApplyRace); `sum`
// (optional) is `timer`'s sums, used instead of it (a row needs only its
// candidate's sum). The timers' and the finder's errors pass through
// (NotFound skips a candidate when the query says skip_missing).
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const DffPlan& plan,
                                   const GemmSetTimer& timer, const GemmSetTimer& predict = {},
                                   const DffRaceFinder& races = {}, const GemmSetSummer& sum = {});
// PlanDff, then the ranking.
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const GemmSetTimer& timer,
                                   const GemmSetTimer& predict = {});
// The same, asking a per-GEMM timer for each GEMM on its own (EachGemm).
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const GemmTimer& timer);

}  // namespace crest::tuner
