// The study each GEMM of a sweep spec belongs to: what `crest compare
// --spec` limits a comparison to and summarises by.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "crest/store/records.h"
#include "crest/sweep/spec.h"

namespace crest::sweep {

// Every GEMM of the spec's plan: a d_ff study's by its DffStudyKey ("dff
// hidden=4096 tokens=8192 tp=1 bf16 fwd fused"), every other one as "other
// GEMMs of <name>" ("other GEMMs of the spec" when it has no name). A GEMM
// of two studies keeps the first.
absl::StatusOr<std::map<store::GemmKey, std::string>> StudiesOf(const SweepSpec& spec);

}  // namespace crest::sweep
