#include "crest/tuner/adaptive_plan.h"

#include <algorithm>
#include <limits>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest::tuner {

absl::StatusOr<AdaptivePlan> AdaptivePlan::Make(std::span<const DffQuery> studies,
                                                const GpuSpec& gpu) {
  AdaptivePlan out;
  out.least_ratio_.fill(1.0);
  for (const DffQuery& query : studies) {
    auto plan = PlanDff(query);
    if (!plan.ok()) {
      return absl::InvalidArgumentError(StrCat(DffStudyKey(query), ": ", plan.status().message()));
    }
    Study study{*std::move(plan), 0};
    const auto& values = study.plan.candidates.values;
    study.baseline = static_cast<size_t>(
        std::find(values.begin(), values.end(), study.plan.candidates.baseline) - values.begin());
    for (const auto& gemms : study.plan.gemms) {
      for (const GemmShape& g : gemms) {
        if (out.predicted_.contains(IdentityOf(g))) continue;
        auto p = Predict(g, gpu);
        if (!p.ok()) {
          return absl::InvalidArgumentError(
              StrCat(DffStudyKey(query), ": ", g.name, ": ", p.status().message()));
        }
        out.predicted_[IdentityOf(g)] = {p->time_us, p->expected_error, p->error_class};
      }
    }
    out.studies_.push_back(std::move(study));
  }
  return out;
}

void AdaptivePlan::Record(const GemmShape& gemm, double median_us) {
  const auto p = predicted_.find(IdentityOf(gemm));
  if (p == predicted_.end() || median_us <= 0) return;
  timed_[IdentityOf(gemm)] = median_us;
  double& least = least_ratio_[p->second.error_class];
  least = std::min(least, median_us / p->second.time_us);
}

void AdaptivePlan::Failed(const GemmShape& gemm) {
  if (predicted_.contains(IdentityOf(gemm))) failed_.insert(IdentityOf(gemm));
}

bool AdaptivePlan::Timed(std::span<const GemmShape> gemms) const {
  return std::all_of(gemms.begin(), gemms.end(),
                     [&](const GemmShape& g) { return timed_.contains(IdentityOf(g)); });
}

bool AdaptivePlan::AnyFailed(std::span<const GemmShape> gemms) const {
  return std::any_of(gemms.begin(), gemms.end(),
                     [&](const GemmShape& g) { return failed_.contains(IdentityOf(g)); });
}

double AdaptivePlan::Sum(std::span<const GemmShape> gemms) const {
  double sum = 0;
  for (const GemmShape& g : gemms) sum += timed_.at(IdentityOf(g));
  return sum;
}

double AdaptivePlan::Optimistic(std::span<const GemmShape> gemms) const {
  double bound = 0;
  for (const GemmShape& g : gemms) {
    if (const auto t = timed_.find(IdentityOf(g)); t != timed_.end()) {
      bound += t->second;
      continue;
    }
    const Predicted& p = predicted_.at(IdentityOf(g));
    bound += p.time_us * std::min(1 - p.error, least_ratio_[p.error_class]);
  }
  return bound;
}

std::vector<size_t> AdaptivePlan::Wanted(const Study& study) const {
  const auto& sets = study.plan.gemms;
  std::vector<size_t> out;
  if (!Timed(sets[study.baseline]) && !AnyFailed(sets[study.baseline]))
    out.push_back(study.baseline);
  double leader = std::numeric_limits<double>::infinity();
  for (const auto& gemms : sets) {
    if (Timed(gemms)) leader = std::min(leader, Sum(gemms));
  }
  const bool started = leader < std::numeric_limits<double>::infinity();
  if (!started) {
    // Nothing timed whole yet: the predicted tie group 1.
    double best = std::numeric_limits<double>::infinity();
    std::vector<double> low(sets.size()), time(sets.size());
    for (size_t i = 0; i < sets.size(); ++i) {
      for (const GemmShape& g : sets[i]) {
        const Predicted& p = predicted_.at(IdentityOf(g));
        time[i] += p.time_us;
        low[i] += p.time_us * (1 - p.error);
      }
      best = std::min(best, time[i]);
    }
    for (size_t i = 0; i < sets.size(); ++i) {
      if (i != study.baseline && low[i] <= best && !AnyFailed(sets[i])) out.push_back(i);
    }
    return out;
  }
  std::vector<std::pair<double, size_t>> open;
  for (size_t i = 0; i < sets.size(); ++i) {
    if (Timed(sets[i]) || AnyFailed(sets[i]) || i == study.baseline) continue;
    const double bound = Optimistic(sets[i]);
    if (bound < leader) open.emplace_back(bound, i);
  }
  std::sort(open.begin(), open.end());
  if (open.size() > static_cast<size_t>(kAdaptiveBatch)) open.resize(kAdaptiveBatch);
  for (const auto& [bound, i] : open) out.push_back(i);
  return out;
}

std::vector<GemmShape> AdaptivePlan::Next() const {
  std::vector<GemmShape> out;
  std::set<GemmIdentity> added;
  for (const Study& study : studies_) {
    for (const size_t i : Wanted(study)) {
      for (const GemmShape& g : study.plan.gemms[i]) {
        const GemmIdentity key = IdentityOf(g);
        if (timed_.contains(key) || failed_.contains(key) || !added.insert(key).second) continue;
        out.push_back(g);
      }
    }
  }
  return out;
}

std::vector<AdaptivePlan::StudyState> AdaptivePlan::States() const {
  std::vector<StudyState> out;
  for (const Study& study : studies_) {
    StudyState s;
    std::set<GemmIdentity> distinct, timed;
    s.candidates = static_cast<int64_t>(study.plan.gemms.size());
    s.leader_us = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < study.plan.gemms.size(); ++i) {
      const auto& gemms = study.plan.gemms[i];
      for (const GemmShape& g : gemms) {
        distinct.insert(IdentityOf(g));
        if (timed_.contains(IdentityOf(g))) timed.insert(IdentityOf(g));
      }
      if (!Timed(gemms)) continue;
      ++s.timed;
      if (const double t = Sum(gemms); t < s.leader_us) {
        s.leader_us = t;
        s.leader = study.plan.candidates.values[i];
      }
    }
    if (s.leader == 0) s.leader_us = 0;
    s.gemms = static_cast<int64_t>(distinct.size());
    s.gemms_timed = static_cast<int64_t>(timed.size());
    out.push_back(s);
  }
  return out;
}

}  // namespace crest::tuner
