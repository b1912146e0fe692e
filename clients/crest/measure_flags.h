// Internal to the crest CLI: the measuring engine's flags, which become the
// "measure" section of the sweep spec (so the daemon measures the same way).
#pragma once

#include <string>
#include <vector>

#include "crest/common/cmdline.h"
#include "crest/measure/options.h"
#include "nlohmann/json_fwd.hpp"

namespace crest::cli {

struct MeasureFlags {
  measure::MeasureOptions values;  // defaults shown in --help
  bool warm = false;
  std::string clocks = "sustained";
  bool no_race = false;
  std::vector<std::string> race_algos{"best"};
  int device = 0;  // local sweeps: which CUDA device
  // The options the user gave, by their spec field name.
  std::vector<std::pair<std::string, cmdline::Flag>> given;
};

// Adds --warm --clocks --top-k --exhaustive --max-algos --max-noise
// --min-samples --max-seconds, the race's --no-race --race-window
// --race-candidates --race-resolution --race-max-seconds --race-algos (and --device when
// `with_device`).
void AddMeasureFlags(CLI::App& app, MeasureFlags& flags, bool with_device);

// The spec "measure" fields of the flags given on the command line (the
// race's under "race"); an empty object when none was.
nlohmann::json MeasureOverrides(const MeasureFlags& flags);

}  // namespace crest::cli
