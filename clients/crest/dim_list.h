// Internal to the crest CLI: a dimension given as one value ("4096"), a list
// ("4096,5120") or an inclusive range with a step ("4096:8192:512").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace crest::cli {

// At most kMaxListValues values; InvalidArgument names `field` and says what
// is wrong (not a number, a step of 0, an empty range, too many values).
inline constexpr size_t kMaxListValues = 4096;
absl::StatusOr<std::vector<int64_t>> ParseDimList(const std::string& field,
                                                  const std::string& text);

// "7e9", "7B", "1.5T", "350M", "7000000000" → parameters; InvalidArgument
// names `field`.
absl::StatusOr<double> ParseCount(const std::string& field, const std::string& text);

// "5%" or "0.05" → 0.05; InvalidArgument names `field`.
absl::StatusOr<double> ParseFraction(const std::string& field, const std::string& text);

}  // namespace crest::cli
