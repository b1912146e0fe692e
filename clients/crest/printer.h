// Internal to the crest CLI: how what a command answers is printed. A
// command builds one result (results.h, info_report.h, *_reports.h: the
// same type whether it came from this machine, a database or a crestd) and hands
// it to the Printer for the format asked: one printer per format
// (printer.cc), each calling the result's layout in its format, one function
// each: Text, Json or Csv (outputs.h).
#pragma once

#include <memory>
#include <ostream>

#include "cli.h"
#include "printable.h"

namespace crest::cli {

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void Print(Printable what) = 0;
  template <typename Result>
  void Print(const Result& result) {
    Print(Printable(&result));
  }
};

// kTable: aligned text for people; kJson: one JSON document per answer,
// "schema_version" (kJsonSchemaVersion) first; kCsv: the answer's table alone
// (RFC 4180: a header line, then one line per row, plain numbers).
enum class Format { kTable, kJson, kCsv };

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out);
// The printer for the format the global flags (--json, --csv) ask, on io.out.
std::unique_ptr<Printer> PrinterFor(const Io& io);

}  // namespace crest::cli
