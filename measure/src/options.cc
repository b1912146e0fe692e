#include "crest/measure/options.h"

#include "crest/common/str_cat.h"

namespace crest::measure {
namespace {

template <typename T>
absl::Status Within(const char* field, const char* flag, T value, T low, T high,
                    bool low_open = false) {
  const bool ok = (low_open ? value > low : value >= low) && value <= high;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat("measure.", field, " (", flag, "): must be ", low_open ? "in (" : "between ", low,
             low_open ? ", " : " and ", high, low_open ? "]" : "", " (got ", value, ")"));
}

}  // namespace

absl::Status ValidateMeasureOptions(const MeasureOptions& o) {
  for (absl::Status s :
       {Within("top_k", "--top-k", o.top_k, 1, 64),
        Within("max_algos", "--max-algos", o.max_algos, 1, 1024),
        Within("max_noise", "--max-noise", o.max_noise, 0.0, 0.5, true),
        Within("min_samples", "--min-samples", o.min_samples, 3, 10000),
        Within("max_seconds", "--max-seconds", o.max_seconds, 0.0, 600.0, true),
        Within("race.window", "--race-window", o.race.window, 0.0, 0.5, true),
        Within("race.max_candidates", "--race-candidates", o.race.max_candidates, 2, 32),
        Within("race.resolution", "--race-resolution", o.race.resolution, 0.0, 0.2, true),
        Within("race.max_seconds", "--race-max-seconds", o.race.max_seconds, 0.0, 600.0, true)}) {
    if (!s.ok()) return s;
  }
  const std::vector<tuner::AlgoChoice>& algos = o.race.algos;
  const bool repeated = algos.size() == 2 && algos[0] == algos[1];
  if (algos.empty() || algos.size() > 2 || repeated) {
    return absl::InvalidArgumentError(
        "measure.race.algos (--race-algos): must name best, default or both, each once");
  }
  return absl::OkStatus();
}

}  // namespace crest::measure
