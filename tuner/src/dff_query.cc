#include "crest/tuner/dff_query.h"

#include <utility>

#include "crest/common/str_cat.h"
#include "crest/tuner/shapes.h"

namespace crest::tuner {

namespace {

// The shapes of a query's candidates' MLPs.
ShapeOptions ShapesOf(const DffQuery& q) {
  ShapeOptions options;
  options.include_backward = q.train;
  options.fuse_gate_up = q.fuse_gate_up;
  return options;
}

}  // namespace

int64_t DffCandidateGemmCount(const DffQuery& q) { return MlpGemmCount(ShapesOf(q)); }

absl::StatusOr<std::vector<GemmShape>> DffCandidateGemms(const DffQuery& q, int64_t d_ff) {
  return MlpGemms(q.tokens, q.dff.hidden, d_ff, q.dff.tp, q.dtype, ShapesOf(q));
}

int64_t MlpParams(const DffQuery& q, int64_t d_ff) { return 3 * q.dff.hidden * d_ff / q.dff.tp; }

std::string DffStudyKey(const DffQuery& q) {
  return StrCat("dff hidden=", q.dff.hidden, " tokens=", q.tokens, " tp=", q.dff.tp, " ",
                DTypeName(q.dtype), " ", q.train ? "train" : "fwd", " ",
                q.fuse_gate_up ? "fused" : "separate");
}

absl::StatusOr<DffPlan> PlanDff(const DffQuery& q) {
  if (q.top < 0) {
    return absl::InvalidArgumentError(StrCat("top must be 0 (all) or more (got ", q.top, ")"));
  }
  auto candidates = GenerateDffCandidates(q.dff);
  if (!candidates.ok()) return candidates.status();
  DffPlan plan;
  plan.candidates = *std::move(candidates);
  const ShapeOptions shapes = ShapesOf(q);
  const size_t sets = plan.candidates.values.size();
  plan.gemms.Reserve(sets, sets * static_cast<size_t>(MlpGemmCount(shapes)));
  for (int64_t d_ff : plan.candidates.values) {
    auto added = plan.gemms.AddWith([&](std::vector<GemmShape>& gemms) {
      return AppendMlpGemms(q.tokens, q.dff.hidden, d_ff, q.dff.tp, q.dtype, shapes, gemms);
    });
    if (!added.ok()) return added;
  }
  return plan;
}

}  // namespace crest::tuner
