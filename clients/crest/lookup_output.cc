// `crest lookup`'s answer as text, JSON and CSV.
#include "crest/common/str_cat.h"
#include "crest/measure/clock_policy.h"
#include "crest/tuner/timing_ops.h"
#include "json_views.h"
#include "outputs.h"
#include "results.h"

namespace crest::cli {
namespace {

nlohmann::json MeasuredJson(const answers::GemmAnswer& answer) {
  const store::MeasurementRow& r = *answer.measured;
  const auto& a = r.result.algo;
  const auto& s = r.result.stats;
  return {{"source", tuner::SourceName(tuner::Source::kMeasured)},
          {"time_us", answer.pooled ? answer.pooled_us : s.median_us},
          {"tflops", r.result.tflops},
          {"runs", RunsJson(answer.runs)},
          {"pooled", answer.pooled},
          {"pooled_interval_us", answer.pooled
                                     ? nlohmann::json{answer.pooled_low_us, answer.pooled_high_us}
                                     : nlohmann::json(nullptr)},
          {"stats",
           {{"median_us", s.median_us},
            {"mean_us", s.mean_us},
            {"min_us", s.min_us},
            {"stdev_us", s.stdev_us},
            {"samples", s.samples},
            {"ci_low_us", s.ci_low_us},
            {"ci_high_us", s.ci_high_us},
            {"sm_clock_mhz", s.sm_clock_mhz},
            {"power_w", s.power_w},
            {"throttle_reasons", measure::DescribeReasons(s.throttle_reasons)},
            {"discarded", s.discarded},
            {"clock_note", r.result.clock_note}}},
          {"algo",
           {{"algo_id", a.algo_id},
            {"tile", a.tile},
            {"tile_m", a.tile_m},
            {"tile_n", a.tile_n},
            {"stages", a.stages},
            {"split_k", a.split_k},
            {"reduction_scheme", a.reduction_scheme},
            {"swizzle", a.swizzle},
            {"custom_option", a.custom_option},
            {"cluster_shape", a.cluster_shape}}},
          {"tiles", r.tiles},
          {"waves", r.waves},
          {"tile_efficiency", r.tile_efficiency},
          {"wave_efficiency", r.wave_efficiency},
          {"verified", r.result.verified},
          {"heuristic_rank", r.result.heuristic_rank},
          {"cache_mode", tuner::CacheModeName(r.mode.cache)},
          {"clock_policy", tuner::ClockPolicyName(r.mode.clocks)},
          {"settled_clock_mhz", r.settled_clock_mhz},
          {"leading_dims", {{"lda", r.lda}, {"ldb", r.ldb}, {"ldc", r.ldc}}},
          {"device", DeviceJson(r.device)},
          {"software", SoftwareJson(r.software)}};
}

nlohmann::json PredictedJson(const store::PredictionRow& p) {
  return {{"source", tuner::SourceName(tuner::Source::kPredicted)},
          {"model_version", p.model_version},
          {"time_us", p.time_us},
          {"tflops", p.tflops},
          {"tile", {{"m", p.tile_m}, {"n", p.tile_n}}},
          {"tiles", p.tiles},
          {"waves", p.waves},
          {"tile_efficiency", p.tile_efficiency},
          {"wave_efficiency", p.wave_efficiency},
          {"expected_error", p.expected_error},
          {"bound", p.bound}};
}

void MeasuredText(const answers::GemmAnswer& answer, std::ostream& out) {
  const store::MeasurementRow& r = *answer.measured;
  const auto& s = r.result.stats;
  const auto& a = r.result.algo;
  out << "MEASURED on " << answers::DescribeProvenance(r.device, r.software) << "\n"
      << "  " << tuner::CacheModeName(r.mode.cache) << " L2, "
      << tuner::ClockPolicyName(r.mode.clocks) << " clocks: SM " << Fixed(s.sm_clock_mhz, 0)
      << " MHz, " << Fixed(s.power_w, 0) << " W, clock-event reasons "
      << measure::DescribeReasons(s.throttle_reasons) << ", " << s.discarded << " samples discarded"
      << (r.result.clock_note.empty() ? "" : " (" + r.result.clock_note + ")") << "\n";
  if (answer.pooled) {
    std::vector<std::string> runs;
    for (const tuner::RunInfo& run : answer.runs) runs.push_back(tuner::DescribeRun(run));
    out << "  POOLED over " << answer.runs.size() << " runs (" << StrJoin(runs, ", ")
        << "): median " << Fixed(answer.pooled_us, 2) << " us, the runs' intervals span "
        << Fixed(answer.pooled_low_us, 2) << "-" << Fixed(answer.pooled_high_us, 2)
        << " us; below, the lower middle run's own figures\n";
  } else if (!answer.runs.empty()) {
    out << "  run: " << tuner::DescribeRun(answer.runs.front()) << "\n";
  }
  const bool full_coverage = tuner::MedianIntervalCoverage(s.samples) >= 0.95;
  out << "  median " << Fixed(s.median_us, 2) << " us (" << tuner::CoverageText(s.samples)
      << (full_coverage ? " interval " : " interval: the range of too few samples for 95%, ")
      << Fixed(s.ci_low_us, 2) << "-" << Fixed(s.ci_high_us, 2) << ", mean " << Fixed(s.mean_us, 2)
      << ", min " << Fixed(s.min_us, 2) << ", stdev " << Fixed(s.stdev_us, 2) << ", " << s.samples
      << " samples), " << Fixed(r.result.tflops, 1) << " TFLOP/s, verified\n"
      << "  algorithm " << a.algo_id << ": tile " << a.tile_m << "x" << a.tile_n << " (id "
      << a.tile << "), stages " << a.stages << ", split-K " << a.split_k << ", reduction "
      << a.reduction_scheme << ", swizzle " << a.swizzle << ", custom " << a.custom_option
      << ", cluster " << a.cluster_shape << "; "
      << (r.result.heuristic_rank == 0  ? std::string("cuBLASLt's first choice")
          : r.result.heuristic_rank > 0 ? StrCat("cuBLASLt's choice ", r.result.heuristic_rank + 1)
                                        : std::string("from the exhaustive search"))
      << "\n"
      << "  " << r.tiles << " tiles in " << r.waves << " wave(s); tile efficiency "
      << Fixed(100 * r.tile_efficiency, 1) << "%, wave efficiency "
      << Fixed(100 * r.wave_efficiency, 1) << "%\n";
}

}  // namespace

nlohmann::json Json(const LookupResult& r) {
  nlohmann::json doc = {{"schema_version", kJsonSchemaVersion},
                        {"gpu", std::string(r.gpu.name)},
                        {"gemm", GemmJson(r.gemm)},
                        {"answered_by", r.origin.description}};
  doc.update(r.answer.measured ? MeasuredJson(r.answer) : PredictedJson(*r.answer.predicted));
  return doc;
}

void Text(const LookupResult& r, std::ostream& out) {
  const tuner::GemmShape& g = r.gemm;
  out << "GEMM M=" << g.m << " N=" << g.n << " K=" << g.k << " batch=" << g.batch << " "
      << tuner::DTypeName(g.dtype) << " " << g.Layout() << " on " << r.gpu.name << "\n";
  if (r.answer.measured) {
    MeasuredText(r.answer, out);
    return;
  }
  const auto& p = *r.answer.predicted;
  out << "PREDICTED (model " << p.model_version << "; nothing measured in " << r.origin.description
      << ")\n  " << Fixed(p.time_us, 1) << " us, " << Fixed(p.tflops, 1) << " TFLOP/s, tile "
      << p.tile_m << "x" << p.tile_n << ", " << p.tiles << " tiles in " << p.waves << " wave(s), "
      << p.bound << "-bound; expected error +/-" << Fixed(100 * p.expected_error, 1) << "%\n";
}

Table Csv(const LookupResult& r) {
  Table table({{"m"},
               {"n"},
               {"k"},
               {"batch"},
               {"dtype", Table::Align::kLeft},
               {"layout", Table::Align::kLeft},
               {"time_us"},
               {"time_low_us"},
               {"time_high_us"},
               {"TFLOP/s"},
               {"source", Table::Align::kLeft},
               {"provenance", Table::Align::kLeft},
               {"run", Table::Align::kLeft}});
  const tuner::GemmShape& g = r.gemm;
  auto timing = answers::TimingOf(r.answer, g);
  const double tflops =
      r.answer.measured ? r.answer.measured->result.tflops : r.answer.predicted->tflops;
  table.AddRow({std::to_string(g.m), std::to_string(g.n), std::to_string(g.k),
                std::to_string(g.batch), std::string(tuner::DTypeName(g.dtype)), g.Layout(),
                Fixed(timing->time_us, 2), Fixed(timing->low_us, 2), Fixed(timing->high_us, 2),
                Fixed(tflops, 1), std::string(tuner::SourceName(timing->source)),
                timing->provenance, RunColumn(timing->runs, timing->pooled)});
  return table;
}

}  // namespace crest::cli
