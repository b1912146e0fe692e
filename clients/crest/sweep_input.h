// Internal to the crest CLI: the sweep spec text that `crest sweep`,
// `crest jobs submit` and `crest fleet submit` send or run: a spec file, or
// the d_ff flags turned into the same JSON (one schema either way;
// docs/sweep-spec.md), with the measuring flags given on the command line
// merged into its "measure" section.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "dff_flags.h"
#include "nlohmann/json_fwd.hpp"

namespace crest::cli {

// Exactly one of `spec_file` and the d_ff flags (--hidden …) must be given;
// InvalidArgument names them otherwise. NotFound for an unreadable file.
// `measure` (MeasureOverrides) replaces those fields of the spec's
// "measure" section. With a spec file, --gpu (window.gpu) becomes the
// spec's "gpu" (InvalidArgument naming gpu when the spec names another).
// `shard` ("I/N", or empty) becomes the spec's "shard": task I of N;
// `plan` ("full", "adaptive", or empty) the spec's "plan"; `revalidate`
// sets the spec's "revalidate" (false leaves the spec's own).
absl::StatusOr<std::string> SweepSpecText(const std::string& spec_file, const DffFlags& window,
                                          const nlohmann::json& measure,
                                          const std::string& shard = "",
                                          const std::string& plan = "", bool revalidate = false);

}  // namespace crest::cli
