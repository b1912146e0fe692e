#include "crest/sweep/spec_studies.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/dff_ranking.h"

namespace crest::sweep {

absl::StatusOr<std::map<store::GemmKey, std::string>> StudiesOf(const SweepSpec& spec) {
  std::map<store::GemmKey, std::string> out;
  for (const DffQuery& query : spec.dff) {
    auto plan = PlanDff(query);
    if (!plan.ok()) return plan.status();
    const std::string study = DffStudyKey(query);
    for (const auto& gemms : plan->gemms) {
      for (const GemmShape& g : gemms) out.try_emplace(store::GemmKey::Of(g), study);
    }
  }
  const std::string other = spec.name.empty() ? std::string("other GEMMs of the spec")
                                              : StrCat("other GEMMs of ", spec.name);
  for (const GemmShape& g : spec.gemms) out.try_emplace(store::GemmKey::Of(g), other);
  return out;
}

}  // namespace crest::sweep
