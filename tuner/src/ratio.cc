#include "crest/tuner/ratio.h"

#include <cctype>
#include <cstdint>
#include <numeric>
#include <optional>

#include "crest/common/str_cat.h"

namespace crest::tuner {
namespace {

constexpr int64_t kMaxRatioValue = 64;
constexpr int64_t kMaxTerm = 1'000'000'000;  // numerator or denominator
constexpr int kMaxDecimals = 9;

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(
      "ratio: '", text, "' ", why, " (expected a fraction like 8/3 or a decimal like 2.6667)"));
}

// Parses "123" or "12.375" into num/den exactly. Nothing else is accepted.
std::optional<std::pair<int64_t, int64_t>> ParseDecimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t num = 0;
  int64_t den = 1;
  bool seen_point = false;
  bool seen_digit = false;
  int decimals = 0;
  for (char c : s) {
    if (c == '.') {
      if (seen_point) return std::nullopt;
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    seen_digit = true;
    if (seen_point) {
      if (++decimals > kMaxDecimals) return std::nullopt;
      den *= 10;
    }
    num = num * 10 + (c - '0');
    if (num > kMaxTerm * 100) return std::nullopt;
  }
  if (!seen_digit) return std::nullopt;
  return std::make_pair(num, den);
}

}  // namespace

absl::StatusOr<Ratio> ParseRatio(std::string_view text) {
  int64_t num = 0;
  int64_t den = 1;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const auto top = ParseDecimal(text.substr(0, slash));
    const auto bottom = ParseDecimal(text.substr(slash + 1));
    if (!top || !bottom || top->second != 1 || bottom->second != 1) {
      return Bad(text, "is not a fraction of two whole numbers");
    }
    num = top->first;
    den = bottom->first;
    if (den == 0) return Bad(text, "divides by zero");
  } else {
    const auto value = ParseDecimal(text);
    if (!value) return Bad(text, "is not a number");
    num = value->first;
    den = value->second;
  }
  if (num == 0) return Bad(text, "must be greater than 0");
  const int64_t g = std::gcd(num, den);
  num /= g;
  den /= g;
  if (num > kMaxRatioValue * den) {
    return Bad(text, StrCat("must be at most ", kMaxRatioValue));
  }
  if (num > kMaxTerm || den > kMaxTerm) return Bad(text, "has too many digits");
  return Ratio{num, den, std::string(text)};
}

}  // namespace crest::tuner
