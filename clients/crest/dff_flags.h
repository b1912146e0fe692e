// Internal to the crest CLI: the d_ff window flags shared by `crest dff` and
// `crest sweep`, and their translation into a DffQuery.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "crest/common/cmdline.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/dff_ranking.h"

namespace crest::cli {

struct DffFlags {
  int64_t hidden = 0;
  std::string ratio{tuner::kDefaultRatio};
  int64_t window = tuner::kDefaultWindow;
  int64_t align = tuner::kDefaultAlign;
  int64_t tokens = tuner::kDefaultTokens;
  int64_t tp = tuner::kDefaultTp;
  std::string dtype{tuner::kDefaultDtype};
  std::string pass{tuner::kDefaultPass};
  bool separate_gate_up = false;
  std::string gpu;
};

// Adds --hidden --ratio --window --align --tokens --tp --dtype --pass
// --separate-gate-up --gpu to `app`, bound to `flags`. With required=false,
// --hidden and --gpu may be left out (the caller checks).
void AddDffFlags(CLI::App& app, DffFlags& flags, bool required = true);

// The JSON sweep spec equivalent of the d_ff flags (see docs/sweep-spec.md).
std::string DffFlagsToSpecJson(const DffFlags& flags);

// InvalidArgument names the flag (ratio, dtype, pass).
absl::StatusOr<tuner::DffQuery> ToDffQuery(const DffFlags& flags, int top);

}  // namespace crest::cli
