// Where a number came from. Every time Crest reports says which: measured
// by Crest's engine on a device, predicted by the analytic model, imported
// from another tool, or a sum over GEMMs of more than one kind. The names
// are what tables, JSON and the Python client show.
#pragma once

#include <optional>
#include <string_view>

namespace crest {

enum class Source {
  kUnknown,    // not said (a message from an older peer)
  kMeasured,   // timed on a device by Crest's engine
  kPredicted,  // the analytic model (with its version)
  kImported,   // another tool's timing (crest db import), never an answer
  kMixed,      // a sum over GEMMs of different sources
};

// "unknown", "measured", "predicted", "imported", "mixed".
std::string_view SourceName(Source source);
std::optional<Source> ParseSource(std::string_view name);

}  // namespace crest
