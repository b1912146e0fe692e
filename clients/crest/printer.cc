// The three printers: each visits what it is given and prints that result's
// layout in its format.
#include "printer.h"

#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

class TablePrinter final : public Printer {
 public:
  explicit TablePrinter(std::ostream& out) : out_(out) {}
  using Printer::Print;
  void Print(Printable what) override {
    std::visit([this](const auto* result) { Text(*result, out_); }, what);
  }

 private:
  std::ostream& out_;
};

class JsonPrinter final : public Printer {
 public:
  explicit JsonPrinter(std::ostream& out) : out_(out) {}
  using Printer::Print;
  void Print(Printable what) override {
    std::visit([this](const auto* result) { out_ << Document(Json(*result)) << '\n'; }, what);
  }

 private:
  std::ostream& out_;
};

class CsvPrinter final : public Printer {
 public:
  explicit CsvPrinter(std::ostream& out) : out_(out) {}
  using Printer::Print;
  void Print(Printable what) override {
    std::visit([this](const auto* result) { Csv(*result).PrintCsv(out_); }, what);
  }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out) {
  switch (format) {
    case Format::kJson: return std::make_unique<JsonPrinter>(out);
    case Format::kCsv: return std::make_unique<CsvPrinter>(out);
    case Format::kTable: break;
  }
  return std::make_unique<TablePrinter>(out);
}

std::unique_ptr<Printer> PrinterFor(const Io& io) {
  return MakePrinter(io.json ? Format::kJson : (io.csv ? Format::kCsv : Format::kTable), io.out);
}

}  // namespace crest::cli
