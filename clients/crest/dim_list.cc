#include "dim_list.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "crest/common/quoted.h"
#include "crest/common/str_cat.h"

namespace crest::cli {
namespace {

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

absl::StatusOr<int64_t> ParseInt(const std::string& field, std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return absl::InvalidArgumentError(StrCat(field, ": ", Quoted(text), " is not an integer"));
  }
  return v;
}

absl::StatusOr<double> ParseNumber(const std::string& field, const std::string& text,
                                   std::string_view what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return absl::InvalidArgumentError(StrCat(field, ": ", Quoted(text), " is not ", what));
  }
  return v;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ParseDimList(const std::string& field,
                                                  const std::string& text) {
  std::vector<int64_t> out;
  for (std::string_view part : Split(text, ',')) {
    const std::vector<std::string_view> range = Split(part, ':');
    if (range.size() == 1) {
      auto v = ParseInt(field, part);
      if (!v.ok()) return v.status();
      out.push_back(*v);
    } else if (range.size() == 3) {
      auto from = ParseInt(field, range[0]);
      auto to = ParseInt(field, range[1]);
      auto step = ParseInt(field, range[2]);
      for (const auto* v : {&from, &to, &step}) {
        if (!v->ok()) return v->status();
      }
      if (*step < 1 || *to < *from) {
        return absl::InvalidArgumentError(
            StrCat(field, ": range ", Quoted(part), " needs FROM <= TO and a positive STEP"));
      }
      if (static_cast<size_t>((*to - *from) / *step + 1) + out.size() > kMaxListValues) {
        return absl::InvalidArgumentError(StrCat(field, ": more than ", kMaxListValues, " values"));
      }
      for (int64_t v = *from; v <= *to; v += *step) out.push_back(v);
    } else {
      return absl::InvalidArgumentError(StrCat(
          field, ": ", Quoted(part), " is not a value, a list (A,B) or a range FROM:TO:STEP"));
    }
    if (out.size() > kMaxListValues) {
      return absl::InvalidArgumentError(StrCat(field, ": more than ", kMaxListValues, " values"));
    }
  }
  return out;
}

absl::StatusOr<double> ParseCount(const std::string& field, const std::string& text) {
  double scale = 1;
  std::string number = text;
  if (!number.empty()) {
    switch (number.back()) {
      case 'K':
      case 'k':
        scale = 1e3;
        break;
      case 'M':
      case 'm':
        scale = 1e6;
        break;
      case 'B':
      case 'b':
      case 'G':
      case 'g':
        scale = 1e9;
        break;
      case 'T':
      case 't':
        scale = 1e12;
        break;
      default:
        break;
    }
    if (scale != 1) number.pop_back();
  }
  auto v = ParseNumber(field, number, "a count (7e9, 7B, 350M)");
  if (!v.ok()) return v.status();
  return *v * scale;
}

absl::StatusOr<double> ParseFraction(const std::string& field, const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  auto v = ParseNumber(field, percent ? text.substr(0, text.size() - 1) : text,
                       "a fraction (0.05) or a percentage (5%)");
  if (!v.ok()) return v.status();
  return percent ? *v / 100 : *v;
}

}  // namespace crest::cli
