#include "dff_row_fields.h"

#include <array>

#include "crest/tuner/source.h"

namespace crest::cli {
namespace {

using V = DffFieldValue;
using K = DffFieldKind;

// speedup_vs_baseline and its basis are null where no baseline answered.
bool HasSpeedup(const tuner::DffRow& r) { return r.speedup_vs_baseline > 0; }

std::vector<int64_t> JobIds(const tuner::DffRow& r) {
  std::vector<int64_t> ids;
  ids.reserve(r.runs.size());
  for (const tuner::RunInfo& run : r.runs) ids.push_back(run.job_id);
  return ids;
}

constexpr std::array kFields{
    DffRowField{"d_ff", K::kInt, [](const tuner::DffRow& r, int64_t) { return V(r.d_ff); }},
    DffRowField{"time_us", K::kReal, [](const tuner::DffRow& r, int64_t) { return V(r.time_us); }},
    DffRowField{"tflops", K::kReal, [](const tuner::DffRow& r, int64_t) { return V(r.tflops); }},
    DffRowField{"speedup_vs_baseline", K::kReal,
                [](const tuner::DffRow& r, int64_t) {
                  return HasSpeedup(r) ? V(r.speedup_vs_baseline) : V();
                }},
    DffRowField{"mlp_params", K::kInt,
                [](const tuner::DffRow& r, int64_t) { return V(r.mlp_params); }},
    DffRowField{"params_delta", K::kInt,
                [](const tuner::DffRow& r, int64_t) { return V(r.params_delta); }},
    DffRowField{"source", K::kText,
                [](const tuner::DffRow& r, int64_t) { return V(tuner::SourceName(r.source)); }},
    DffRowField{"provenance", K::kText,
                [](const tuner::DffRow& r, int64_t) { return V(std::string_view(r.provenance)); }},
    DffRowField{"time_low_us", K::kReal,
                [](const tuner::DffRow& r, int64_t) { return V(r.time_low_us); }},
    DffRowField{"time_high_us", K::kReal,
                [](const tuner::DffRow& r, int64_t) { return V(r.time_high_us); }},
    DffRowField{"tie_group", K::kInt,
                [](const tuner::DffRow& r, int64_t) { return V(int64_t{r.tie_group}); }},
    DffRowField{"rank", K::kInt, [](const tuner::DffRow&, int64_t rank) { return V(rank); }},
    DffRowField{"speedup_basis", K::kText,
                [](const tuner::DffRow& r, int64_t) {
                  return HasSpeedup(r) ? V(tuner::SourceName(r.speedup_basis)) : V();
                }},
    DffRowField{"runs", K::kJobIds, [](const tuner::DffRow& r, int64_t) { return V(JobIds(r)); }},
    DffRowField{"pooled", K::kFlag, [](const tuner::DffRow& r, int64_t) { return V(r.pooled); }},
    DffRowField{"race_verdict", K::kText,
                [](const tuner::DffRow& r, int64_t) {
                  return r.race_verdict.empty() ? V() : V(std::string_view(r.race_verdict));
                },
                false},
    DffRowField{"race_ratio", K::kReal,
                [](const tuner::DffRow& r, int64_t) {
                  return r.race_verdict.empty() ? V() : V(r.race_ratio);
                },
                false},
};

}  // namespace

std::span<const DffRowField> DffRowFields() { return kFields; }

}  // namespace crest::cli
