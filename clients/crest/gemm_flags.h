// Internal to the crest CLI: flags that name one GEMM (--m --n --k --batch
// --dtype --layout), shared by `explain` and `lookup`; which measurements
// answer (--warm, --clocks).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "crest/common/cmdline.h"
#include "crest/tuner/defaults.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"

namespace crest::cli {

struct GemmFlags {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  std::string dtype{tuner::kDefaultDtype};
  std::string layout = "NT";
};

void AddGemmFlags(CLI::App& app, GemmFlags& flags);

// InvalidArgument names the flag (dtype, layout, m, n, k, batch).
absl::StatusOr<tuner::GemmShape> ToGemm(const GemmFlags& flags);

// Which measurements answer a query: cold and sustained unless asked.
struct ModeFlags {
  bool warm = false;
  std::string clocks = "sustained";
};
void AddModeFlags(CLI::App& app, ModeFlags& flags);
tuner::MeasureMode ToMode(const ModeFlags& flags);

}  // namespace crest::cli
