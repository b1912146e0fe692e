// The table form of every answer, for spreadsheets: one CSV table.
#include <ostream>

#include "outputs.h"
#include "printer.h"

namespace crest::cli {
namespace {

class CsvPrinter final : public Printer {
 public:
  explicit CsvPrinter(std::ostream& out) : out_(out) {}

  void Info(const InfoReport& r) override {
    Table table({{"name", Table::Align::kLeft}, {"built", Table::Align::kLeft},
                 {"measures", Table::Align::kLeft}, {"detail", Table::Align::kLeft}});
    for (const auto& b : r.backends) {
      table.AddRow({b.name, b.built ? "true" : "false", b.measures ? "true" : "false", b.detail});
    }
    table.PrintCsv(out_);
  }
  void Dff(const DffResult& r) override { DffCsv(r).PrintCsv(out_); }
  void Vocab(const VocabResult& r) override { VocabCsv(r).PrintCsv(out_); }
  void Design(const DesignResult& r) override { DesignCsv(r).PrintCsv(out_); }
  void Lookup(const LookupResult& r) override { LookupCsv(r).PrintCsv(out_); }
  void Explain(const ExplainResult& r) override { ExplainCsv(r).PrintCsv(out_); }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Printer> MakeCsvPrinter(std::ostream& out) {
  return std::make_unique<CsvPrinter>(out);
}

}  // namespace crest::cli
