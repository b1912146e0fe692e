// A sweep's end as it is reported: its outcome and what it ran on. One type
// for a sweep run here (`crest sweep --db`) and one a crestd ran (`crest
// sweep --server`, rebuilt from the job's final event by crest::wire), so
// both print the same report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/backend.h"
#include "nlohmann/json.hpp"

namespace crest::sweep {

struct SweepReport {
  SweepOutcome outcome;
  std::string backend;             // "model", "cublaslt", "replay"
  bool measures = false;           // the backend measures
  tuner::MeasureMode mode;         // measuring backends: how
  nlohmann::json measure;          // measuring backends: the spec's "measure" section
  std::vector<std::string> notes;  // the spec's notes
  // Measuring backends: the device and software every measured figure of
  // the report (races included) comes from.
  std::optional<tuner::DeviceInfo> device;
  std::optional<tuner::SoftwareInfo> software;
};

// The report of `outcome`, a run of `spec` on `backend`.
SweepReport ReportOf(SweepOutcome outcome, const SweepSpec& spec, const tuner::Backend& backend);

}  // namespace crest::sweep
