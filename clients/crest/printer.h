// Internal to the crest CLI: how an answer is printed. A command builds one
// result (results.h, info_report.h: the same type whether it came from this
// machine, a database or a crestd) and hands it to the Printer for the format
// asked; each format is one class (table_printer.cc, json_printer.cc,
// csv_printer.cc), each command's layout in that format one function
// (outputs.h).
#pragma once

#include <memory>
#include <ostream>

#include "cli.h"
#include "info_report.h"
#include "results.h"

namespace crest::cli {

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void Info(const InfoReport& report) = 0;
  virtual void Dff(const DffResult& result) = 0;
  virtual void Vocab(const VocabResult& result) = 0;
  virtual void Design(const DesignResult& result) = 0;
  virtual void Lookup(const LookupResult& result) = 0;
  virtual void Explain(const ExplainResult& result) = 0;
};

// kTable: aligned text for people; kJson: one JSON document per answer with
// "schema_version" (kJsonSchemaVersion); kCsv: the answer's table alone
// (RFC 4180: a header line, then one line per row, plain numbers).
enum class Format { kTable, kJson, kCsv };

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out);
std::unique_ptr<Printer> MakeTablePrinter(std::ostream& out);
std::unique_ptr<Printer> MakeJsonPrinter(std::ostream& out);
std::unique_ptr<Printer> MakeCsvPrinter(std::ostream& out);
// The printer for the format the global flags (--json, --csv) ask, on io.out.
std::unique_ptr<Printer> PrinterFor(const Io& io);

}  // namespace crest::cli
