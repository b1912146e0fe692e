// The human form of every answer: aligned text.
#include <ostream>

#include "crest/common/str_cat.h"
#include "outputs.h"
#include "printer.h"
#include "table.h"

namespace crest::cli {
namespace {

std::string DeviceLine(const DeviceEntry& e) {
  const DeviceInfo& d = e.device;
  std::string line = StrCat("  ", e.index ? StrCat("[", *e.index, "] ") : std::string(), d.name,
                            " ", d.uuid, " (", d.gpu_model, ", ", d.sm_count, " SMs, cc ",
                            d.cc_major, ".", d.cc_minor, ", L2 ", d.l2_bytes >> 20, " MiB, ",
                            d.memory_bytes >> 30, " GiB");
  if (e.free_bytes > 0) line += StrCat(", ", e.free_bytes >> 30, " GiB free");
  line += StrCat(", SM ", d.sm_clock_mhz, " MHz)");
  if (e.software) {
    line += StrCat("; driver ", e.software->driver, ", CUDA runtime ", e.software->cuda_runtime,
                   ", cuBLASLt ", e.software->cublaslt);
  }
  return line;
}

void PrintDatabase(const DatabaseEntry& db, std::ostream& out) {
  out << "database: " << db.path << " (schema " << db.schema_version << ", "
      << Grouped(db.file_bytes) << " bytes): " << Grouped(db.measurements) << " measurements ("
      << Grouped(db.verified_measurements) << " verified), " << Grouped(db.predictions)
      << " predictions, " << db.devices << " devices\njobs:";
  if (db.jobs_by_state.empty()) out << " none";
  for (const auto& [state, n] : db.jobs_by_state) out << " " << state << "=" << n;
  out << '\n';
}

class TablePrinter final : public Printer {
 public:
  explicit TablePrinter(std::ostream& out) : out_(out) {}

  void Info(const InfoReport& r) override {
    out_ << r.program << " " << r.version;
    if (!r.server.empty()) out_ << " at " << r.server << " (host " << r.host << ")";
    out_ << "\npredictor: " << r.predictor << '\n';
    for (const auto& c : r.calibrations) out_ << "calibration: " << c << '\n';
    out_ << "backends:\n";
    for (const auto& b : r.backends) {
      out_ << "  " << b.name << std::string(10 - std::min<size_t>(9, b.name.size()), ' ')
           << (b.built ? "built" : "not built") << " (" << b.detail << ")\n";
    }
    if (r.devices.empty()) {
      out_ << "devices: none (" << (r.device_error.empty() ? "no CUDA device" : r.device_error)
           << ")\n";
    } else {
      out_ << "devices:\n";
      for (const auto& d : r.devices) out_ << DeviceLine(d) << '\n';
    }
    if (r.database) PrintDatabase(*r.database, out_);
  }
  void Dff(const DffResult& r) override { DffText(r, out_); }
  void Vocab(const VocabResult& r) override { VocabText(r, out_); }
  void Design(const DesignResult& r) override { DesignText(r, out_); }
  void Lookup(const LookupResult& r) override { LookupText(r, out_); }
  void Explain(const ExplainResult& r) override { ExplainText(r, out_); }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Printer> MakeTablePrinter(std::ostream& out) {
  return std::make_unique<TablePrinter>(out);
}

}  // namespace crest::cli
