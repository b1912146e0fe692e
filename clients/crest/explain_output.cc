// `crest explain`'s answer (the model's breakdown of one GEMM) as text,
// JSON and CSV.
#include <string>
#include <vector>

#include "crest/common/str_cat.h"
#include "json_views.h"
#include "outputs.h"
#include "results.h"

namespace crest::cli {
namespace {

std::string AlignmentLine(const char* operand, const char* dim, const tuner::OperandAlignment& a,
                          const tuner::GpuSpec& gpu) {
  std::string verdict =
      a.alignment < gpu.min_alignment_bytes
          ? StrCat("MISALIGNED (below ", gpu.min_alignment_bytes, " B): no fast kernel")
          : (a.alignment >= gpu.preferred_alignment_bytes ? std::string("ok")
                                                          : std::string("aligned, not preferred"));
  return StrCat("  ", operand, ": contiguous ", dim, " = ", a.elements, " elements = ", a.bytes,
                " B, aligned to ", a.alignment, " B -> ", verdict, " (rate x", Fixed(a.factor, 2),
                ")\n");
}

std::string FamilyLine(const tuner::Prediction& p) {
  return p.family == tuner::KernelFamily::kFast
             ? StrCat("kernel family: fast (every operand 16-byte aligned), sustained rate ",
                      Fixed(p.family_tflops, 1), " TFLOP/s x alignment ",
                      Fixed(p.alignment_factor, 2), "\n")
             : StrCat("kernel family: FALLBACK (an operand below 16 B), rate ",
                      Fixed(p.family_tflops, 1), " TFLOP/s x misaligned inputs ",
                      Fixed(p.alignment_factor, 2),
                      p.k_residue_factor != 1.0
                          ? StrCat(" (of which x", Fixed(p.k_residue_factor, 3), " for K mod ",
                                   tuner::kKResiduePeriod, " = ", p.k_residue,
                                   " with both inputs along K: fitted, docs/predictor.md)")
                          : std::string(),
                      "\n");
}

// Every tile the model considered. `labelled` adds a source and a model
// column (for --csv, where the report's PREDICTED header is not printed).
Table TileTable(const tuner::Prediction& p, bool labelled) {
  std::vector<Table::Column> columns = {{"tile", Table::Align::kLeft},
                                        {"CTA/SM"},
                                        {"tiles"},
                                        {"waves"},
                                        {"tile_eff"},
                                        {"wave_eff"},
                                        {"reuse"},
                                        {"compute_us"},
                                        {"memory_us"},
                                        {"time_us"}};
  if (labelled) {
    columns.push_back({"source", Table::Align::kLeft});
    columns.push_back({"model", Table::Align::kLeft});
  }
  Table table(std::move(columns));
  for (const auto& e : p.tiles) {
    const bool best = e.tile.m == p.best.tile.m && e.tile.n == p.best.tile.n;
    std::vector<std::string> row = {StrCat(e.tile.m, "x", e.tile.n, best ? " *" : ""),
                                    std::to_string(e.ctas_per_sm),
                                    std::to_string(e.tiles),
                                    std::to_string(e.waves),
                                    Fixed(e.tile_efficiency, 3),
                                    Fixed(e.wave_efficiency, 3),
                                    Fixed(e.reuse_efficiency, 3),
                                    Fixed(e.compute_us, 1),
                                    Fixed(e.memory_us, 1),
                                    Fixed(e.time_us, 1)};
    if (labelled) {
      row.push_back(std::string(tuner::SourceName(tuner::Source::kPredicted)));
      row.push_back(std::string(p.model_version));
    }
    table.AddRow(std::move(row));
  }
  return table;
}

}  // namespace

void Text(const ExplainResult& r, std::ostream& out) {
  const tuner::GemmShape& g = r.gemm;
  const tuner::GpuSpec& gpu = r.gpu;
  const tuner::Prediction& p = r.prediction;
  out << "GEMM M=" << g.m << " N=" << g.n << " K=" << g.k << " batch=" << g.batch << " "
      << tuner::DTypeName(g.dtype) << " layout " << g.Layout() << " on " << gpu.name << " ("
      << gpu.sm_count << " SMs)\n";
  out << "PREDICTED by model " << p.model_version << " (" << p.calibration
      << "), not measured; expected error +/-" << Fixed(100 * p.expected_error, 1) << "%\n\n";
  out << "time " << Fixed(p.time_us, 1) << " us, " << Fixed(p.tflops, 1) << " TFLOP/s ("
      << Fixed(100 * p.tflops / p.peak_tflops, 1) << "% of the " << Fixed(p.peak_tflops, 1)
      << " dense peak), " << (p.memory_bound ? "memory-bound" : "compute-bound") << "\n";
  out << "best tile " << p.best.tile.m << "x" << p.best.tile.n << ": " << p.best.tiles
      << " tiles in " << p.best.waves << " wave(s) of " << gpu.sm_count * p.best.ctas_per_sm
      << " slots; tile efficiency " << Fixed(100 * p.best.tile_efficiency, 1)
      << "%, wave efficiency " << Fixed(100 * p.best.wave_efficiency, 1) << "%\n"
      << FamilyLine(p) << "\n";
  out << "alignment (" << gpu.name << " wants multiples of " << gpu.min_alignment_bytes
      << " B, best " << gpu.preferred_alignment_bytes << " B):\n";
  out << AlignmentLine("A", g.a_transposed ? "M" : "K", p.a, gpu);
  out << AlignmentLine("B", g.b_transposed ? "K" : "N", p.b, gpu);
  out << AlignmentLine("C", "N", p.c, gpu) << '\n';
  TileTable(p, false).Print(out);
  out << "\n* = chosen. time = max(compute, memory) + launch. Assumptions and parameters: "
         "docs/predictor.md\n";
}

nlohmann::json Json(const ExplainResult& r) {
  nlohmann::json doc = PredictionJson(r.gemm, r.gpu, r.prediction);
  doc["answered_by"] = r.origin.description;
  return doc;
}

// The tile column marks the chosen tile with " *".
Table Csv(const ExplainResult& r) { return TileTable(r.prediction, true); }

}  // namespace crest::cli
