#include "table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "crest/common/str_cat.h"

namespace crest::cli {
namespace {

// Display width of UTF-8 text: counts code points, not bytes.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// "67,108,864" or "-1,024": a number Grouped() wrote.
bool IsGrouped(const std::string& s) {
  static const std::regex kGrouped("[+-]?[0-9]{1,3}(,[0-9]{3})+");
  return std::regex_match(s, kGrouped);
}

std::string Ungrouped(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return s;
}

}  // namespace

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = Width(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], Width(row[c]));
  }
  const auto print_row = [&](const auto& cell_at) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_at(c);
      const std::string pad(widths[c] - Width(cell), ' ');
      if (c > 0) out << "  ";
      if (columns_[c].align == Align::kRight) {
        out << pad << cell;
      } else {
        out << cell;
        if (c + 1 < columns_.size()) out << pad;
      }
    }
    out << '\n';
  };
  print_row([&](size_t c) -> const std::string& { return columns_[c].header; });
  for (const auto& row : rows_) print_row([&](size_t c) -> const std::string& { return row[c]; });
}

void Table::PrintCsv(std::ostream& out) const {
  const auto cell = [&](const std::string& text) {
    const std::string s = IsGrouped(text) ? Ungrouped(text) : text;
    if (s.find_first_of(",\"\r\n") == std::string::npos) {
      out << s;
      return;
    }
    out << '"';
    for (char c : s) out << (c == '"' ? "\"\"" : std::string(1, c));
    out << '"';
  };
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) out << ',';
    cell(columns_[c].header);
  }
  out << '\n';
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out << ',';
      cell(row[c]);
    }
    out << '\n';
  }
}

std::string Fixed(double value, int digits) { return Decimals(value, digits); }

std::string Percent(double fraction) { return Fixed(100 * fraction, 1) + "%"; }

std::string Grouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? "-" + out : out;
}

std::string RatioInterval(double low, double high) {
  return StrCat(Decimals(low, 4), "-", Decimals(high, 4));
}

}  // namespace crest::cli
