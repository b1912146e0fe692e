#include "crest/sweep/spec_studies.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/dff_ranking.h"

namespace crest::sweep {

absl::StatusOr<std::map<store::GemmKey, std::string>> StudiesOf(const SweepSpec& spec) {
  std::map<store::GemmKey, std::string> out;
  for (const tuner::DffQuery& query : spec.dff) {
    auto plan = tuner::PlanDff(query);
    if (!plan.ok()) return plan.status();
    const std::string study = tuner::DffStudyKey(query);
    for (const auto& gemms : plan->gemms) {
      for (const tuner::GemmShape& g : gemms) out.try_emplace(store::GemmKey::Of(g), study);
    }
  }
  const std::string other = spec.name.empty() ? std::string("other GEMMs of the spec")
                                              : StrCat("other GEMMs of ", spec.name);
  for (const tuner::GemmShape& g : spec.gemms) out.try_emplace(store::GemmKey::Of(g), other);
  return out;
}

}  // namespace crest::sweep
