// Internal to crest::store: the columns of a race and of a race's standing,
// declared once: the inserts, the lookup and the merge are made from these
// lists (races.cc binds and reads them). Adding a column is an entry here,
// its bind and read in races.cc, and a migration (schema.cc).
#pragma once

#include <string>
#include <string_view>

namespace crest::store::internal {

// "gpu_model, cache_mode, …, error_rate": a race's own columns (not its id,
// uid or references: job, device, software), each preceded by `prefix`.
std::string RaceColumnList(std::string_view prefix = "");

// "candidate, value, verdict, …, ratio_high": a standing's columns (not its
// race_id), each preceded by `prefix`.
std::string RaceEntryColumnList(std::string_view prefix = "");

}  // namespace crest::store::internal
