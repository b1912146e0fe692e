#include "table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace crest::cli {
namespace {

// Display width of UTF-8 text: counts code points, not bytes.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
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

std::string Fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string Grouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace crest::cli
