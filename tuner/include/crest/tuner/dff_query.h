// A d_ff study: the query (which candidates, under which shapes), its plan
// (each candidate's MLP GEMMs) and its study key. No times here: the ranking
// is dff_ranking.h, so that what only holds or plans a query (a sweep spec,
// its studies) does not depend on the timings' types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/candidates.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/dtype.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gemm_sets.h"

namespace crest::tuner {

struct DffQuery {
  DffWindow dff;                    // the candidates: hidden, ratio, ±window, align, tp
  int64_t tokens = kDefaultTokens;  // M of every MLP GEMM (b·s per rank)
  DType dtype = DType::kBf16;
  bool train = false;  // add dgrad and wgrad GEMMs
  bool fuse_gate_up = true;
  int top = kDefaultTop;  // rows kept of each kind; 0 keeps all
  // Leave out candidates the timer answers NotFound for (a database that
  // does not cover the whole window) instead of failing.
  bool skip_missing = false;
};

// A query's candidates and each one's MLP GEMMs, computed once: a caller
// that prefetches times for every GEMM and the ranking share it.
struct DffPlan {
  DffCandidates candidates;
  GemmSets gemms;  // gemms[i] belongs to candidates.values[i]
};

// InvalidArgument names the bad field (top, hidden, ratio, window, align,
// tokens, tp).
absl::StatusOr<DffPlan> PlanDff(const DffQuery& query);

// The study a race of this query's candidates belongs to: everything that
// shapes a candidate's GEMMs but its d_ff ("dff hidden=4096 tokens=8192
// tp=1 bf16 fwd fused"); the window, ratio and alignment only choose which
// d_ff values are candidates.
std::string DffStudyKey(const DffQuery& query);

// 3·hidden·d_ff / tp: the parameters of one SwiGLU MLP on a rank.
int64_t MlpParams(const DffQuery& query, int64_t d_ff);

// How many GEMMs each candidate of `query` has (DffCandidateGemms' count).
int64_t DffCandidateGemmCount(const DffQuery& query);

// The GEMMs of the MLP for one d_ff under `query`.
absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& query, int64_t d_ff);

}  // namespace crest::tuner
