// `crest calibrate`'s report (the parameters before and after, the fit) as
// text, JSON and CSV.
#include <algorithm>
#include <functional>
#include <set>

#include "catalogue_reports.h"
#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

// "low..high" of the K-residue factors of one input class.
std::string ResidueRange(const tuner::ModelParams& p, tuner::DType dtype, int class_bytes) {
  double low = 0, high = 0;
  for (int r = 1; r < tuner::kKResiduePeriod; ++r) {
    const int bytes = r * tuner::ElementBytes(dtype);
    const int alignment = bytes & -bytes;  // the lowest set bit
    if (alignment >= 16 || std::max(alignment, 2) != class_bytes) continue;
    const double factor = p.fallback_k_residue[static_cast<size_t>(r)];
    low = low == 0 ? factor : std::min(low, factor);
    high = std::max(high, factor);
  }
  return StrCat(Fixed(low, 3), "..", Fixed(high, 3));
}

// The model's parameters before and after the fit, each fitted or kept.
Table ParamsTable(const tuner::ModelParams& before, const tuner::Calibration& c) {
  const std::set<std::string> fitted(c.fitted.begin(), c.fitted.end());
  Table table(
      {{"parameter", Table::Align::kLeft}, {"before"}, {"after"}, {"status", Table::Align::kLeft}});
  const auto row = [&](const std::string& name, double b, double a, int digits) {
    table.AddRow(
        {name, Fixed(b, digits), Fixed(a, digits), fitted.contains(name) ? "fitted" : "kept"});
  };
  const tuner::ModelParams& p = c.params;
  row("fast_tflops", before.fast_tflops, p.fast_tflops, 1);
  const char* fast[] = {"fast_align.16", "fast_align.32", "fast_align.64", "fast_align.128"};
  for (size_t i = 0; i < 4; ++i) row(fast[i], before.fast_align[i], p.fast_align[i], 3);
  row("fallback_tflops", before.fallback_tflops, p.fallback_tflops, 1);
  const char* fb[] = {"fallback_input.2", "fallback_input.4", "fallback_input.8"};
  for (size_t i = 0; i < 3; ++i) row(fb[i], before.fallback_input[i], p.fallback_input[i], 3);
  for (const tuner::KResidueFit& k : c.k_residue) {
    const std::string name = StrCat("fallback_k_residue.", k.class_bytes);
    table.AddRow({name, ResidueRange(before, c.dtype, k.class_bytes),
                  ResidueRange(p, c.dtype, k.class_bytes),
                  fitted.contains(name) ? "fitted" : "kept"});
  }
  for (size_t i = 0; i < tuner::kErrorClasses.size(); ++i) {
    row(StrCat("expected_error.", tuner::kErrorClasses[i]), before.expected_error[i],
        p.expected_error[i], 3);
  }
  row("memory_efficiency", before.memory_efficiency, p.memory_efficiency, 2);
  row("launch_us", before.launch_us, p.launch_us, 1);
  return table;
}

// Whether each class's K-residue pattern replicated, and what was fitted.
void PrintKResidue(const tuner::Calibration& c, std::ostream& out) {
  if (c.k_residue.empty()) return;
  out << "\nfallback rate by K mod 128 (both inputs along a misaligned K), fitted where two halves "
         "of the rows (K/128 even, odd) agree (r >= 0.6 over >= 12 residues):\n";
  Table table({{"class", Table::Align::kLeft},
               {"rows"},
               {"residues"},
               {"halves agree (r)"},
               {"factors"},
               {"status", Table::Align::kLeft}});
  for (const tuner::KResidueFit& k : c.k_residue) {
    table.AddRow({StrCat(k.class_bytes, " B"), std::to_string(k.rows), std::to_string(k.residues),
                  Fixed(k.agreement, 3),
                  k.fitted ? StrCat(Fixed(k.low, 3), "..", Fixed(k.high, 3), " (shrunk x",
                                    Fixed(k.shrink, 2), ")")
                           : "",
                  k.fitted ? "fitted" : "kept: does not replicate"});
  }
  table.Print(out);
}

// The fit of one or more models on the same rows, a column each: GEMM
// time, then every SwiGLU MLP window.
Table MetricsTable(const std::vector<std::pair<std::string, const tuner::FitMetrics*>>& columns) {
  std::vector<Table::Column> header = {{"", Table::Align::kLeft}};
  for (const auto& [name, m] : columns) header.push_back({name});
  Table table(header);
  const auto row = [&](std::string label,
                       const std::function<std::string(const tuner::FitMetrics&)>& cell) {
    std::vector<std::string> cells = {std::move(label)};
    for (const auto& [name, m] : columns) cells.push_back(cell(*m));
    table.AddRow(cells);
  };
  row("Spearman, GEMM time", [](const tuner::FitMetrics& m) { return Fixed(m.spearman, 3); });
  row("median error, GEMM time",
      [](const tuner::FitMetrics& m) { return Percent(m.median_error); });
  const tuner::FitMetrics& last = *columns.back().second;
  for (size_t i = 0; i < last.studies.size(); ++i) {
    const auto study = [&](const tuner::FitMetrics& m) -> const tuner::StudyFit* {
      return i < m.studies.size() ? &m.studies[i] : nullptr;
    };
    const tuner::StudyFit& a = last.studies[i];
    row(StrCat("SwiGLU MLP window tokens=", a.tokens, " h=", a.hidden, " (", a.candidates,
               " d_ff)"),
        [](const tuner::FitMetrics&) { return std::string(); });
    row("  Spearman, MLP time", [&](const tuner::FitMetrics& m) {
      return study(m) ? Fixed(study(m)->spearman, 3) : std::string();
    });
    row("  median error, MLP time", [&](const tuner::FitMetrics& m) {
      return study(m) ? Percent(study(m)->median_error) : std::string();
    });
    row("  MLP times within the predicted interval", [&](const tuner::FitMetrics& m) {
      return study(m) ? Percent(study(m)->coverage) : std::string();
    });
    row("    of d_ff multiples of 8", [&](const tuner::FitMetrics& m) {
      return study(m) && study(m)->coverage_multiples_of_8 >= 0
                 ? Percent(study(m)->coverage_multiples_of_8)
                 : std::string();
    });
    row(StrCat("  predicted best vs the measured best (", a.measured_best, ")"),
        [&](const tuner::FitMetrics& m) {
          return study(m) ? StrCat(study(m)->predicted_best, " +", Percent(study(m)->best_gap))
                          : std::string();
        });
  }
  return table;
}

// Where the intervals came from, and how often they held left-out windows.
void PrintInterval(const tuner::IntervalFit& f, std::ostream& out) {
  out << "\nintervals: expected_error per class is the " << Fixed(100 * f.quantile, 0)
      << "th percentile of |predicted - measured| / measured over " << f.basis;
  if (f.windows == 0) {
    out << "; nothing was left out, so their coverage of unseen windows is unknown\n";
    return;
  }
  out << " (" << f.windows << " left out in turn, " << f.gemms << " GEMMs)\n  they held "
      << Percent(f.coverage) << " of " << f.candidates << " left-out MLP times";
  if (f.multiples_of_8 > 0) {
    out << ", " << Percent(f.coverage_multiples_of_8) << " of " << f.multiples_of_8
        << " at d_ff multiples of 8";
  }
  out << " (estimated on the windows that set them)\n";
}

void PrintFit(const tuner::Calibration& c, std::ostream& out) {
  out << "\nfit on " << c.after.rows << " distinct GEMMs (" << c.provenance.rows
      << " compute-bound ones set the rates)\n";
  MetricsTable({{"before", &c.before}, {"after", &c.after}}).Print(out);
  PrintKResidue(c, out);
  PrintInterval(c.interval, out);
}

}  // namespace

void Text(const CalibrateReport& r, std::ostream& out) {
  const tuner::Calibration& c = r.calibration;
  out << "calibrated " << c.model_version << " for " << c.gpu << " " << tuner::DTypeName(c.dtype)
      << "\n  from " << c.provenance.rows << " " << c.provenance.source << " GEMM times on "
      << c.provenance.device << " (" << c.provenance.tool << ")\n  wrote " << r.path
      << "; load it with `crest --calibration FILE`, `crestd --calibration FILE` or "
         "<state-dir>/calibrations/\n\n";
  ParamsTable(r.before, c).Print(out);
  PrintFit(c, out);
}

// The calibration file's document, as written.
nlohmann::json Json(const CalibrateReport& r) {
  return nlohmann::json::parse(tuner::CalibrationJson(r.calibration));
}

// The calibration's result: the parameters (the file is written either way).
Table Csv(const CalibrateReport& r) { return ParamsTable(r.before, r.calibration); }

}  // namespace crest::cli

namespace crest::cli {

void Text(const CalibrationCheckReport& r, std::ostream& out) {
  out << "checked " << r.model << "\n  against " << r.metrics.rows << " distinct "
      << tuner::DTypeName(r.dtype) << " GEMMs on " << r.gpu << " in " << r.db << " (" << r.source
      << " rows); nothing fitted, nothing written\n\n";
  MetricsTable({{"model in force", &r.metrics}}).Print(out);
}

nlohmann::json Json(const CalibrationCheckReport& r) {
  nlohmann::json doc = {{"schema_version", kJsonSchemaVersion},
                        {"db", r.db},
                        {"gpu", r.gpu},
                        {"dtype", tuner::DTypeName(r.dtype)},
                        {"source", r.source},
                        {"model_version", r.model_version},
                        {"model", r.model}};
  doc.update(tuner::FitMetricsJson(r.metrics));  // rows, spearman, median_error, studies
  return doc;
}

// One row per SwiGLU MLP window.
Table Csv(const CalibrationCheckReport& r) {
  Table table({{"model_version", Table::Align::kLeft},
               {"tokens"},
               {"hidden"},
               {"candidates"},
               {"spearman"},
               {"median_error"},
               {"measured_best"},
               {"predicted_best"},
               {"best_gap"},
               {"coverage"},
               {"coverage_multiples_of_8"}});
  for (const tuner::StudyFit& s : r.metrics.studies) {
    table.AddRow({r.model_version, std::to_string(s.tokens), std::to_string(s.hidden),
                  std::to_string(s.candidates), Fixed(s.spearman, 4), Fixed(s.median_error, 4),
                  std::to_string(s.measured_best), std::to_string(s.predicted_best),
                  Fixed(s.best_gap, 4), Fixed(s.coverage, 4),
                  s.coverage_multiples_of_8 < 0 ? "" : Fixed(s.coverage_multiples_of_8, 4)});
  }
  return table;
}

}  // namespace crest::cli
