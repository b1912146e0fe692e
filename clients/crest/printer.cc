#include "printer.h"

namespace crest::cli {

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out) {
  switch (format) {
    case Format::kJson: return MakeJsonPrinter(out);
    case Format::kCsv: return MakeCsvPrinter(out);
    case Format::kTable: break;
  }
  return MakeTablePrinter(out);
}

std::unique_ptr<Printer> PrinterFor(const Io& io) {
  return MakePrinter(io.json ? Format::kJson : (io.csv ? Format::kCsv : Format::kTable), io.out);
}

}  // namespace crest::cli
