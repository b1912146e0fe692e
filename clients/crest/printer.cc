// The printers: one per format, each visiting what it is given and writing
// that result's layout in its format.
#include "printer.h"

#include "json_views.h"
#include "outputs.h"
#include "results.h"

namespace crest::cli {
namespace {

// Each format is how one result is written.
struct AsText {
  template <typename Result>
  void operator()(const Result& r, std::ostream& out) const {
    Text(r, out);
  }
};
struct AsJson {
  template <typename Result>
  void operator()(const Result& r, std::ostream& out) const {
    out << Document(Json(r)) << '\n';
  }
};
struct AsCsv {
  template <typename Result>
  void operator()(const Result& r, std::ostream& out) const {
    Csv(r).PrintCsv(out);
  }
};

template <typename Write>
class FormatPrinter final : public Printer {
 public:
  explicit FormatPrinter(std::ostream& out) : out_(out) {}
  using Printer::Print;
  void Print(Printable what) override {
    std::visit([this](const auto* result) { Write{}(*result, out_); }, what);
  }

 private:
  std::ostream& out_;
};

// Keeps the JSON document instead of writing it (Io::document), and with
// Io::dff_rows a d_ff answer's rows apart from it.
class DocumentKeeper final : public Printer {
 public:
  DocumentKeeper(nlohmann::ordered_json& document, std::vector<tuner::DffRow>* dff_rows)
      : document_(document), dff_rows_(dff_rows) {}
  using Printer::Print;
  void Print(Printable what) override {
    std::visit([this](const auto* result) { Keep(*result); }, what);
  }

 private:
  template <typename Result>
  void Keep(const Result& result) {
    document_ = DocumentJson(Json(result));
  }
  void Keep(const DffResult& result) {
    if (dff_rows_ == nullptr) {
      document_ = DocumentJson(Json(result));
      return;
    }
    *dff_rows_ = result.ranking.rows;
    document_ = DocumentJson(Json(result, DffRowsIn::kKeptApart));
  }

  nlohmann::ordered_json& document_;
  std::vector<tuner::DffRow>* dff_rows_;
};

}  // namespace

std::unique_ptr<Printer> MakePrinter(Format format, std::ostream& out) {
  switch (format) {
    case Format::kJson:
      return std::make_unique<FormatPrinter<AsJson>>(out);
    case Format::kCsv:
      return std::make_unique<FormatPrinter<AsCsv>>(out);
    case Format::kTable:
      break;
  }
  return std::make_unique<FormatPrinter<AsText>>(out);
}

std::unique_ptr<Printer> PrinterFor(const Io& io) {
  if (io.json && io.document != nullptr) {
    return std::make_unique<DocumentKeeper>(*io.document, io.dff_rows);
  }
  return MakePrinter(io.json ? Format::kJson : (io.csv ? Format::kCsv : Format::kTable), io.out);
}

}  // namespace crest::cli
