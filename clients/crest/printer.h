// Internal to the crest CLI: how an answer is printed. A command builds one
// result (the same type whether it came from this machine, a database or a
// crestd) and hands it to the Printer for the format asked; each format is
// one class, so a new format (CSV) is one more class, not an edit to every
// command.
#pragma once

#include <memory>
#include <ostream>

#include "info_report.h"

namespace crest::cli {

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void Info(const InfoReport& report) = 0;
};

enum class Format { kTable, kJson };

// kJson: one JSON document per answer with "schema_version" (kJsonSchemaVersion).
std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out);
std::unique_ptr<Printer> MakeTablePrinter(std::ostream& out);
std::unique_ptr<Printer> MakeJsonPrinter(std::ostream& out);

}  // namespace crest::cli
