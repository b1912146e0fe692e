// Internal to the crest CLI: a plain-text table with aligned columns.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace crest::cli {

class Table final {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kRight;
  };

  explicit Table(std::vector<Column> columns);

  // REQUIRES: cells.size() == number of columns.
  void AddRow(std::vector<std::string> cells);
  void Print(std::ostream& out) const;
  // CSV: the header line, then one line per row ('\n' ends a line); numbers
  // lose their thousands separators ("67,108,864" → 67108864); a cell
  // holding a comma, a quote or a line break is quoted, its quotes doubled
  // (RFC 4180).
  void PrintCsv(std::ostream& out) const;
  // PrintCsv when `csv` (the --csv flag), else Print.
  void PrintAs(bool csv, std::ostream& out) const { csv ? PrintCsv(out) : Print(out); }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point with `digits` decimals: Fixed(1234.5678, 1) == "1234.6".
std::string Fixed(double value, int digits);
// A fraction as a percentage with one decimal: Percent(0.1234) == "12.3%".
std::string Percent(double fraction);
// Thousands separated: Grouped(67108864) == "67,108,864"; keeps the sign.
std::string Grouped(int64_t value);
// A ratio's interval at 4 decimals: RatioInterval(0.99, 1.2) == "0.9900-1.2000".
std::string RatioInterval(double low, double high);

}  // namespace crest::cli
