// Internal text helpers of the tuner.
#pragma once

#include <string>
#include <string_view>

namespace crest::tuner::internal {

// Lower-cases ASCII and drops ' ', '_' and '-': "H100_SXM" → "h100sxm".
std::string NormalizeName(std::string_view text);

}  // namespace crest::tuner::internal
