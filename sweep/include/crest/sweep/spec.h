// A sweep spec: what a sweep measures or predicts. The JSON form is what
// `crest sweep --spec FILE` reads and nightly jobs submit; docs/sweep-spec.md
// documents it. `crest sweep` with d_ff flags builds the same spec.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/options.h"
#include "crest/tuner/dff_query.h"
#include "crest/tuner/gemm.h"
#include "nlohmann/json_fwd.hpp"

namespace crest::sweep {

inline constexpr int kSweepSpecVersion = 1;
inline constexpr int64_t kMaxPlanGemms = 2'000'000;       // the default plan limit
inline constexpr size_t kMaxSpecBytes = size_t{1} << 20;  // the spec's JSON text
inline constexpr size_t kMaxSpecNameBytes = 256;          // each "name" in it
inline constexpr int64_t kMaxShards = 65536;              // "shard": {"count"} at most

// The parsed spec, kept as canonical JSON (sorted keys, defaults filled)
// so the same sweep always has the same text: that text identifies its job.
struct SweepSpec {
  std::string canonical_json;
  std::string name;                     // optional label
  std::string gpu;                      // catalogue GPU for predictions (the model backend)
  measure::MeasureOptions measure;      // how a measuring backend measures ("measure")
  std::vector<tuner::GemmShape> gemms;  // the plan: deduplicated, in spec order
  std::vector<tuner::DffQuery> dff;     // the d_ff studies ("dff"), for their races
  std::vector<std::string> notes;       // combinations skipped, and why
  // "plan": "full" (every GEMM; the default) or "adaptive" (the d_ff
  // studies' candidates the model cannot rule out: tuner/adaptive_plan.h;
  // every other GEMM in full). Adaptive needs d_ff studies, a measuring
  // backend, and no shard.
  bool adaptive = false;
  // "revalidate": for each GEMM the store holds under another software
  // version, re-time its stored top algorithms and the library's first
  // choice instead of a full search (runner.h). Needs a measuring backend
  // that can time given algorithms; not with an adaptive plan.
  bool revalidate = false;
};

// Parses and expands a spec. InvalidArgument names the path of the bad field
// ("spec.models[0].tp[2]") and the rule: every dimension's values lie in
// limits.h's bounds, a range's and a GEMM list's counts are checked before
// anything is expanded, the plan holds at most `limit.max_gemms` distinct GEMMs,
// the text at most kMaxSpecBytes, each name kMaxSpecNameBytes, and no object
// gives a key twice.
struct PlanLimit {
  int64_t max_gemms = kMaxPlanGemms;
  std::string_view named_by;  // what sets it, for the message ("--max-job-gemms")
};
absl::StatusOr<SweepSpec> ParseSweepSpec(const std::string& json_text, PlanLimit limit = {});

// The "measure" section for these options, every field filled.
nlohmann::json MeasureJson(const measure::MeasureOptions& options);

}  // namespace crest::sweep
