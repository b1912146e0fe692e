// Expanding a sweep spec's items into the plan's GEMMs: d_ff studies
// ("dff"), model shapes ("models", every configuration of their dimensions'
// values) and single GEMMs ("gemms"), each item's canonical form written as
// it is read. Internal to crest::sweep (spec.cc reads the document).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "crest/common/str_cat.h"
#include "crest/store/records.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/gemm.h"
#include "nlohmann/json.hpp"
#include "spec_fields.h"

namespace crest::sweep::internal {

// Collects GEMMs, dropping repeats of the same key, up to a limit.
class Plan {
 public:
  explicit Plan(PlanLimit limit) : limit_(limit) {}
  int64_t max_gemms() const { return limit_.max_gemms; }
  // "N GEMMs, the limit (--flag)".
  std::string Limit() const {
    return StrCat(limit_.max_gemms, " GEMMs, the limit",
                  limit_.named_by.empty() ? "" : StrCat(" (", limit_.named_by, ")"));
  }

  // Adds `g` unless the plan holds its key already; InvalidArgument at `path`
  // for sizes out of range or a plan past the limit.
  absl::Status Add(const tuner::GemmShape& g, const std::string& path);
  std::vector<tuner::GemmShape> Take() { return std::move(gemms_); }

 private:
  PlanLimit limit_;
  std::set<store::GemmKey> seen_;
  std::vector<tuner::GemmShape> gemms_;
};

// A "dff" item: a d_ff study's GEMMs, and the study itself in `studies`.
absl::Status ExpandDff(const nlohmann::json& item, const std::string& path,
                       tuner::DType default_dtype, Plan& plan, nlohmann::json& canonical,
                       std::vector<tuner::DffQuery>& studies);
// A "models" item: the GEMMs of every configuration of its dimensions'
// values; what was left out and why in `notes`.
absl::Status ExpandModel(const nlohmann::json& item, const std::string& path,
                         tuner::DType default_dtype, Plan& plan, std::vector<std::string>& notes,
                         nlohmann::json& canonical);
// A "gemms" item: every GEMM of its dimensions' values.
absl::Status ExpandGemm(const nlohmann::json& item, const std::string& path,
                        tuner::DType default_dtype, Plan& plan, nlohmann::json& canonical);

}  // namespace crest::sweep::internal
