#include "printer.h"

namespace crest::cli {

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out) {
  return format == Format::kJson ? MakeJsonPrinter(out) : MakeTablePrinter(out);
}

}  // namespace crest::cli
