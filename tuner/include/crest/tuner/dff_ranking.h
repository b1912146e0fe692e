// Ranks d_ff candidates by the time of the whole SwiGLU MLP. The time of each
// GEMM comes from an injected timer: the predictor today, the result store or
// a measuring backend later.
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
#include "crest/tuner/source.h"

namespace crest {

struct DffQuery {
  int64_t hidden = 0;
  Ratio ratio;
  int64_t window = 128;
  int64_t align = 1;
  int64_t tokens = 8192;  // M of every MLP GEMM (b·s per rank)
  int64_t tp = 1;
  DType dtype = DType::kBf16;
  bool train = false;  // add dgrad and wgrad GEMMs
  bool fuse_gate_up = true;
  int top = 10;  // rows kept; 0 keeps all
  // Leave out candidates the timer answers NotFound for (a database that
  // does not cover the whole window) instead of failing.
  bool skip_missing = false;
  // Which measurements answer (database timers): cache mode and clock policy.
  MeasureMode mode;
};

// Where one number came from.
struct Timing {
  double time_us = 0;
  // The interval the time is known within (measured: the sum of each GEMM's
  // 95% interval of its median); 0 when unknown, i.e. just time_us.
  double low_us = 0;
  double high_us = 0;
  Source source = Source::kPredicted;
  std::string provenance;  // model version, or device and software in words
  DeviceInfo device;       // measured only
  SoftwareInfo software;   // measured only
};
// Times one GEMM.
using GemmTimer = std::function<absl::StatusOr<Timing>(const GemmShape&)>;
// Times all GEMMs of one candidate's MLP together, so that a candidate is
// answered from one source. NotFound: no answer for this candidate.
using MlpTimer = std::function<absl::StatusOr<Timing>(std::span<const GemmShape>)>;

struct DffRow {
  int64_t d_ff = 0;
  double time_us = 0;  // whole MLP, all GEMMs summed
  double time_low_us = 0;   // the interval time_us is known within (= time_us when exact)
  double time_high_us = 0;
  // Rows of one group cannot be told apart: their intervals reach the
  // group's fastest row's. Group 1 holds the best and every row tied with it.
  int tie_group = 0;
  double tflops = 0;
  // The baseline's time / this time, where both are the same kind of number
  // (measured, predicted); 0 where the baseline is not known in this kind.
  double speedup_vs_baseline = 0;
  int64_t mlp_params = 0;          // 3·h·d_ff / t
  int64_t params_delta = 0;        // against the baseline
  Source source = Source::kPredicted;
  std::string provenance;
  DeviceInfo device;      // measured rows
  SoftwareInfo software;  // measured rows
};

struct DffRanking {
  DffCandidates candidates;
  DffRow baseline;  // time_us 0 when !baseline_found
  bool baseline_found = false;
  // Grouped by kind of number (measured, then mixed, then predicted), each
  // kind ranked best (fastest) first: a measured and a predicted time are
  // never ranked against each other. Equal times keep the smaller d_ff.
  // `top` keeps that many rows of each kind.
  std::vector<DffRow> rows;
  int64_t tied_with_best = 0;  // rows (of all evaluated, not only `top`) in tie group 1
  int64_t evaluated = 0;     // candidates timed
  int64_t measured = 0;      // of those, answered from measurements
  int64_t predicted = 0;     // … from predictions
  int64_t missing = 0;       // candidates with no answer (skip_missing)
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

// Ranks `plan` (made by PlanDff from the same query); the timer's errors
// pass through.
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const DffPlan& plan,
                                   const MlpTimer& timer);
// PlanDff, then the ranking.
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const MlpTimer& timer);
// The same, summing a per-GEMM timer over each candidate's GEMMs.
absl::StatusOr<DffRanking> RankDff(const DffQuery& query, const GemmTimer& timer);

// Where rows of a kind of number sort: measured 0, mixed 1, predicted 2,
// imported 3, unknown 4.
int KindOrder(Source source);

// What tie grouping reads of a row: its kind of number and its interval.
struct TieKey {
  Source source = Source::kUnknown;
  double low_us = 0;
  double high_us = 0;
};

// Numbers tie groups over rows sorted by kind, then fastest first (the d_ff,
// vocab and design rankings). Each kind has its own current group; a row
// joins it when its interval reaches the group's fastest row's, else it
// starts a new group. Numbers follow the order groups start in. `key` gives
// a row's TieKey, or nullopt for a row left out (group 0); `group` is the
// row's tie-group field.
template <typename Row, typename KeyOf>
void GroupTiesWithinKind(std::vector<Row>& rows, KeyOf key, int Row::*group) {
  int groups = 0;
  std::map<Source, std::pair<double, int>> leader;  // per kind: the group's fastest high, number
  for (Row& r : rows) {
    const std::optional<TieKey> k = key(r);
    if (!k) continue;
    auto it = leader.find(k->source);
    if (it != leader.end() && k->low_us <= it->second.first) {
      r.*group = it->second.second;
      continue;
    }
    r.*group = ++groups;
    leader[k->source] = {k->high_us, groups};
  }
}

// Sets speedup_vs_baseline = baseline_us / time_us on the rows of `kind`.
void SetSpeedups(std::span<DffRow> rows, Source kind, double baseline_us);

// 3·hidden·d_ff / tp: the parameters of one SwiGLU MLP on a rank.
int64_t MlpParams(const DffQuery& query, int64_t d_ff);

// The GEMMs of the MLP for one d_ff under `query`.
absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& query, int64_t d_ff);

// The sum of the GEMMs' times and intervals. A sum over GEMMs of different
// sources is Source::kMixed, never hidden; the first GEMM's provenance,
// device and software are kept. The timer's errors pass through.
absl::StatusOr<Timing> SumGemmTimes(std::span<const GemmShape> gemms, const GemmTimer& timer);

// A timer that answers with the predictor for `gpu`.
GemmTimer PredictorTimer(const GpuSpec& gpu);

}  // namespace crest
