#include "race_columns.h"

#include "key_columns.h"

namespace crest::store::internal {

std::string RaceColumnList(std::string_view prefix) {
  constexpr std::string_view kNames[] = {"gpu_model",  "cache_mode", "clock_policy", "algo_choice",
                                         "study",      "resolution", "rounds",       "retaken",
                                         "warmup_s",   "settled",    "seconds",      "stop_reason",
                                         "created_us", "error_rate"};
  return PrefixedList(kNames, prefix);
}

std::string RaceEntryColumnList(std::string_view prefix) {
  constexpr std::string_view kNames[] = {"candidate", "value", "verdict",   "tie_group", "rounds",
                                         "median_us", "ratio", "ratio_low", "ratio_high"};
  return PrefixedList(kNames, prefix);
}

}  // namespace crest::store::internal
