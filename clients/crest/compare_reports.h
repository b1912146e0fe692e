// Internal to the crest CLI: what `crest compare` reports (two selections
// of runs, or a catalogue's devices against their fleet), printed by the
// printers (printer.h) like the answers of results.h.
#pragma once

#include <cstdint>
#include <string>

#include "crest/answers/compare.h"
#include "crest/answers/fleet_health.h"

namespace crest::cli {

// `crest compare --fleet`: every device of a catalogue against the fleet
// median of its GPU model (answers/fleet_health.h).
struct FleetHealthResult {
  answers::FleetHealth health;
  std::string origin;  // the database
};

// `crest compare`: two selections of runs, GEMM by GEMM (answers/compare.h),
// from a database or a crestd.
struct CompareResult {
  answers::CompareReport report;
  std::string origin;    // the database or "crestd at HOST:PORT"
  int64_t left_out = 0;  // GEMMs a crestd compared but did not list (its limit)
};

}  // namespace crest::cli
