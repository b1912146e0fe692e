// An exact rational multiplier such as 8/3 or 2.6667.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace crest::tuner {

struct Ratio {
  int64_t num = 8;
  int64_t den = 3;
  std::string text = "8/3";  // as the user wrote it

  double Value() const { return static_cast<double>(num) / static_cast<double>(den); }
  // ⌊num·x/den⌋ computed exactly; REQUIRES x >= 0 and num·x < 2^63.
  int64_t FloorTimes(int64_t x) const { return (num * x) / den; }
};

// Parses "8/3", "4", "2.6667" (at most 9 decimal places). The value must be
// in (0, 64]. Anything else is InvalidArgument naming the field "ratio".
absl::StatusOr<Ratio> ParseRatio(std::string_view text);

}  // namespace crest::tuner
