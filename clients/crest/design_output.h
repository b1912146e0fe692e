// Internal to the crest CLI: `crest design`'s table, CSV and JSON.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli.h"
#include "crest/tuner/design.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::cli {

struct DesignReport {
  const std::vector<DesignRow>& rows;  // ranked (RankDesigns)
  const DesignOptions& options;
  const GpuSpec& gpu;
  DType dtype;
  std::string source;  // what answered the GEMMs
  std::string search;  // "searched near …", or empty for explicit configs
  int top = 10;        // rows of each kind (0 = all)
};

// Writes the report in the format `io` asks for (table, --csv, --json).
void PrintDesigns(const DesignReport& report, Io& io);

}  // namespace crest::cli
