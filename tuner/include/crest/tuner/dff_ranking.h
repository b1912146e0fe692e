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
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/ranking.h"
#include "crest/tuner/source.h"
#include "crest/tuner/timing.h"

namespace crest {

struct DffQuery {
  DffWindow dff;  // the candidates: hidden, ratio, ±window, align, tp
  int64_t tokens = kDefaultTokens;  // M of every MLP GEMM (b·s per rank)
  DType dtype = DType::kBf16;
  bool train = false;  // add dgrad and wgrad GEMMs
  bool fuse_gate_up = true;
  int top = kDefaultTop;  // rows kept of each kind; 0 keeps all
  // Leave out candidates the timer answers NotFound for (a database that
  // does not cover the whole window) instead of failing.
  bool skip_missing = false;
};

struct DffRow {
  int64_t d_ff = 0;
  double time_us = 0;  // whole MLP, all GEMMs summed
  double time_low_us = 0;   // the interval time_us is known within (= time_us when exact)
  double time_high_us = 0;
  int tie_group = 0;  // ranking.h: rows of one group cannot be told apart; 1 = the best's
  double tflops = 0;
  // The baseline's time / this time. The baseline's time is of this row's
  // kind where the answer has it, else predicted (speedup_basis says which);
  // 0 only when the baseline has no answer at all.
  double speedup_vs_baseline = 0;
  Source speedup_basis = Source::kUnknown;
  int64_t mlp_params = 0;          // 3·h·d_ff / t
  int64_t params_delta = 0;        // against the baseline
  Source source = Source::kPredicted;
  std::string provenance;
  DeviceInfo device;      // measured rows
  SoftwareInfo software;  // measured rows
  std::vector<RunInfo> runs;  // measured rows: the run, or the runs pooled
  bool pooled = false;
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
  int64_t tied_with_best = 0;  // rows (of all evaluated, not only `top`) in tie group 1
  int64_t evaluated = 0;     // candidates timed
  int64_t measured = 0;      // of those, answered from measurements
  int64_t predicted = 0;     // … from predictions
  int64_t missing = 0;       // candidates with no answer (skip_missing)
  // Of the predicted: candidates whose every GEMM was measured, but by no
  // one run (pooling runs would answer them measured).
  int64_t measured_across_runs = 0;
  // The runs measured rows come from, each once, in order of first use.
  std::vector<RunInfo> runs;
};

// A query's candidates and each one's MLP GEMMs, computed once: a caller
// that prefetches times for every GEMM and the ranking share it.
struct DffPlan {
  DffCandidates candidates;
  std::vector<std::vector<GemmShape>> gemms;  // gemms[i] belongs to candidates.values[i]
};

// InvalidArgument names the bad field (top, hidden, ratio, window, align,
// tokens, tp).
absl::StatusOr<DffPlan> PlanDff(const DffQuery& query);

// Ranks `plan` (made by PlanDff from the same query): `timer` times each
// candidate's GEMMs together; `predict` (optional) is the model alone, for
// a predicted baseline where the baseline's answer is of another kind than a
// row's. The timers' errors pass through (NotFound skips a candidate when
// the query says skip_missing).
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const DffPlan& plan,
                                   const GemmSetTimer& timer, const GemmSetTimer& predict = {});
// PlanDff, then the ranking.
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const GemmSetTimer& timer,
                                   const GemmSetTimer& predict = {});
// The same, asking a per-GEMM timer for each GEMM on its own (EachGemm).
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const GemmTimer& timer);

// 3·hidden·d_ff / tp: the parameters of one SwiGLU MLP on a rank.
int64_t MlpParams(const DffQuery& query, int64_t d_ff);

// The GEMMs of the MLP for one d_ff under `query`.
absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& query, int64_t d_ff);

}  // namespace crest
