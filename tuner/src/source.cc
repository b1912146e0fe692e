#include "crest/tuner/source.h"

#include <array>
#include <utility>

namespace crest::tuner {
namespace {

constexpr std::array<std::pair<Source, std::string_view>, 6> kNames = {{
    {Source::kUnknown, "unknown"},
    {Source::kMeasured, "measured"},
    {Source::kPredicted, "predicted"},
    {Source::kImported, "imported"},
    {Source::kMixed, "mixed"},
    {Source::kReplayed, "replayed"},
}};

}  // namespace

std::string_view SourceName(Source source) {
  for (const auto& [s, name] : kNames) {
    if (s == source) return name;
  }
  return "unknown";
}

std::optional<Source> ParseSource(std::string_view name) {
  for (const auto& [s, n] : kNames) {
    if (n == name) return s;
  }
  return std::nullopt;
}

}  // namespace crest::tuner
