// Internal to the crest CLI: the sweep spec text that `crest sweep` and
// `crest jobs submit` send or run: a spec file, or the d_ff flags turned
// into the same JSON (one schema either way; docs/sweep-spec.md).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "dff_flags.h"

namespace crest::cli {

// Exactly one of `spec_file` and the d_ff flags (--hidden …) must be given;
// InvalidArgument names them otherwise. NotFound for an unreadable file.
absl::StatusOr<std::string> SweepSpecText(const std::string& spec_file, const DffFlags& window);

}  // namespace crest::cli
