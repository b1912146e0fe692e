// Where a number came from. Every time Crest reports says which: measured
// by Crest's engine on a device, replayed (Crest's pipeline on a simulated
// GPU timing a recorded table), predicted by the analytic model, imported
// from another tool, or a sum over GEMMs of more than one kind. The names
// are what tables, JSON and the Python client show.
#pragma once

#include <optional>
#include <string_view>

namespace crest::tuner {

enum class Source {
  kUnknown,    // not said (a message from an older peer)
  kMeasured,   // timed on a device by Crest's engine
  kPredicted,  // the analytic model (with its version)
  kImported,   // another tool's timing (crest db import), never an answer
  kMixed,      // a sum over GEMMs of different sources
  kReplayed,   // Crest's pipeline on a simulated GPU, times from a recorded table
};

// "unknown", "measured", "predicted", "imported", "mixed", "replayed".
std::string_view SourceName(Source source);
std::optional<Source> ParseSource(std::string_view name);

// True for the kinds a run of Crest's pipeline stores (measured, replayed):
// they come with runs, devices and intervals of samples.
inline bool FromRuns(Source source) {
  return source == Source::kMeasured || source == Source::kReplayed;
}

}  // namespace crest::tuner
