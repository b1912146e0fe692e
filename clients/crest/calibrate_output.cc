// `crest calibrate`'s report (the parameters before and after, the fit) as
// text, JSON and CSV.
#include <set>

#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

std::string Percent(double x) { return Fixed(100 * x, 1) + "%"; }

// The model's parameters before and after the fit, each fitted or kept.
Table ParamsTable(const ModelParams& before, const Calibration& c) {
  const std::set<std::string> fitted(c.fitted.begin(), c.fitted.end());
  Table table({{"parameter", Table::Align::kLeft},
               {"before"},
               {"after"},
               {"status", Table::Align::kLeft}});
  const auto row = [&](const std::string& name, double b, double a, int digits) {
    table.AddRow({name, Fixed(b, digits), Fixed(a, digits),
                  fitted.contains(name) ? "fitted" : "kept"});
  };
  const ModelParams& p = c.params;
  row("fast_tflops", before.fast_tflops, p.fast_tflops, 1);
  const char* fast[] = {"fast_align.16", "fast_align.32", "fast_align.64", "fast_align.128"};
  for (size_t i = 0; i < 4; ++i) row(fast[i], before.fast_align[i], p.fast_align[i], 3);
  row("fallback_tflops", before.fallback_tflops, p.fallback_tflops, 1);
  const char* fb[] = {"fallback_input.2", "fallback_input.4", "fallback_input.8"};
  for (size_t i = 0; i < 3; ++i) row(fb[i], before.fallback_input[i], p.fallback_input[i], 3);
  row("expected_error.fast", before.expected_error[0], p.expected_error[0], 3);
  row("expected_error.fallback", before.expected_error[1], p.expected_error[1], 3);
  row("memory_efficiency", before.memory_efficiency, p.memory_efficiency, 2);
  row("launch_us", before.launch_us, p.launch_us, 1);
  return table;
}

void PrintFit(const Calibration& c, std::ostream& out) {
  out << "\nfit on " << c.after.rows << " distinct GEMMs (" << c.provenance.rows
      << " compute-bound ones set the rates)\n";
  Table table({{"", Table::Align::kLeft}, {"before"}, {"after"}});
  table.AddRow({"Spearman, GEMM time", Fixed(c.before.spearman, 3), Fixed(c.after.spearman, 3)});
  table.AddRow({"median error, GEMM time", Percent(c.before.median_error),
                Percent(c.after.median_error)});
  for (size_t i = 0; i < c.after.studies.size() && i < c.before.studies.size(); ++i) {
    const StudyFit& b = c.before.studies[i];
    const StudyFit& a = c.after.studies[i];
    table.AddRow({StrCat("SwiGLU MLP window tokens=", a.tokens, " h=", a.hidden, " (",
                         a.candidates, " d_ff)"),
                  "", ""});
    table.AddRow({"  Spearman, MLP time", Fixed(b.spearman, 3), Fixed(a.spearman, 3)});
    table.AddRow({"  median error, MLP time", Percent(b.median_error), Percent(a.median_error)});
    table.AddRow({StrCat("  predicted best vs the measured best (", a.measured_best, ")"),
                  StrCat(b.predicted_best, " +", Percent(b.best_gap)),
                  StrCat(a.predicted_best, " +", Percent(a.best_gap))});
  }
  table.Print(out);
}

}  // namespace

void Text(const CalibrateReport& r, std::ostream& out) {
  const Calibration& c = r.calibration;
  out << "calibrated " << c.model_version << " for " << c.gpu << " " << DTypeName(c.dtype)
      << "\n  from " << c.provenance.rows << " " << c.provenance.source << " GEMM times on "
      << c.provenance.device << " (" << c.provenance.tool << ")\n  wrote " << r.path
      << "; load it with `crest --calibration FILE`, `crestd --calibration FILE` or "
         "<state-dir>/calibrations/\n\n";
  ParamsTable(r.before, c).Print(out);
  PrintFit(c, out);
}

// The calibration file's document, as written.
nlohmann::json Json(const CalibrateReport& r) {
  return nlohmann::json::parse(CalibrationJson(r.calibration));
}

// The calibration's result: the parameters (the file is written either way).
Table Csv(const CalibrateReport& r) { return ParamsTable(r.before, r.calibration); }

}  // namespace crest::cli
