// Internal: the one place a size is checked against its limit.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "crest/common/str_cat.h"

namespace crest::tuner::internal {

// OK when 1 <= value <= max; else InvalidArgument "<field> must be ...".
inline absl::Status CheckSize(std::string_view field, int64_t value, int64_t max) {
  if (value < 1) {
    return absl::InvalidArgumentError(crest::StrCat(field, " must be positive (got ", value, ")"));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        crest::StrCat(field, " must be at most ", max, " (got ", value, ")"));
  }
  return absl::OkStatus();
}

}  // namespace crest::tuner::internal
