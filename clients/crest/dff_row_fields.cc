#include "dff_row_fields.h"

#include <array>

#include "crest/tuner/source.h"

namespace crest::cli {
namespace {

using V = DffFieldValue;
using K = DffFieldKind;

// speedup_vs_baseline and its basis are null where no baseline answered.
bool HasSpeedup(const DffRow& r) { return r.speedup_vs_baseline > 0; }

std::vector<int64_t> JobIds(const DffRow& r) {
  std::vector<int64_t> ids;
  ids.reserve(r.runs.size());
  for (const RunInfo& run : r.runs) ids.push_back(run.job_id);
  return ids;
}

constexpr std::array kFields{
    DffRowField{"d_ff", K::kInt, [](const DffRow& r, int64_t) { return V(r.d_ff); }},
    DffRowField{"time_us", K::kReal, [](const DffRow& r, int64_t) { return V(r.time_us); }},
    DffRowField{"tflops", K::kReal, [](const DffRow& r, int64_t) { return V(r.tflops); }},
    DffRowField{
        "speedup_vs_baseline", K::kReal,
        [](const DffRow& r, int64_t) { return HasSpeedup(r) ? V(r.speedup_vs_baseline) : V(); }},
    DffRowField{"mlp_params", K::kInt, [](const DffRow& r, int64_t) { return V(r.mlp_params); }},
    DffRowField{"params_delta", K::kInt,
                [](const DffRow& r, int64_t) { return V(r.params_delta); }},
    DffRowField{"source", K::kText,
                [](const DffRow& r, int64_t) { return V(SourceName(r.source)); }},
    DffRowField{"provenance", K::kText,
                [](const DffRow& r, int64_t) { return V(std::string_view(r.provenance)); }},
    DffRowField{"time_low_us", K::kReal, [](const DffRow& r, int64_t) { return V(r.time_low_us); }},
    DffRowField{"time_high_us", K::kReal,
                [](const DffRow& r, int64_t) { return V(r.time_high_us); }},
    DffRowField{"tie_group", K::kInt,
                [](const DffRow& r, int64_t) { return V(int64_t{r.tie_group}); }},
    DffRowField{"rank", K::kInt, [](const DffRow&, int64_t rank) { return V(rank); }},
    DffRowField{"speedup_basis", K::kText,
                [](const DffRow& r, int64_t) {
                  return HasSpeedup(r) ? V(SourceName(r.speedup_basis)) : V();
                }},
    DffRowField{"runs", K::kJobIds, [](const DffRow& r, int64_t) { return V(JobIds(r)); }},
    DffRowField{"pooled", K::kFlag, [](const DffRow& r, int64_t) { return V(r.pooled); }},
    DffRowField{"race_verdict", K::kText,
                [](const DffRow& r, int64_t) {
                  return r.race_verdict.empty() ? V() : V(std::string_view(r.race_verdict));
                },
                false},
    DffRowField{
        "race_ratio", K::kReal,
        [](const DffRow& r, int64_t) { return r.race_verdict.empty() ? V() : V(r.race_ratio); },
        false},
};

}  // namespace

std::span<const DffRowField> DffRowFields() { return kFields; }

}  // namespace crest::cli
