// `crest compare`'s layouts: text, JSON and CSV.
#include <algorithm>

#include "compare_reports.h"
#include "crest/common/str_cat.h"
#include "outputs.h"

namespace crest::cli {
namespace {

using answers::CompareGroup;
using answers::GemmComparison;
using answers::Verdict;

// The table shows at most this many GEMMs (every one in --json and --csv).
constexpr size_t kTextGemms = 40;

std::string Layout(const store::GemmKey& k) { return k.Shape().Layout(); }

void GroupTable(std::string_view title, const std::vector<CompareGroup>& groups,
                std::ostream& out) {
  if (groups.empty()) return;
  out << title << ":\n";
  Table t({{"", Table::Align::kLeft},
           {"GEMMs"},
           {"slower"},
           {"unresolved"},
           {"same"},
           {"faster"},
           {"algo changed"},
           {"geomean ratio"}});
  for (const CompareGroup& g : groups) {
    t.AddRow({g.name.empty() ? "-" : g.name, Grouped(g.gemms), Grouped(g.slower),
              Grouped(g.unresolved), Grouped(g.same), Grouped(g.faster), Grouped(g.algo_changes),
              Decimals(g.geomean_ratio, 4)});
  }
  t.Print(out);
}

nlohmann::json GroupJson(const CompareGroup& g) {
  return {{"name", g.name},
          {"gemms", g.gemms},
          {"slower", g.slower},
          {"unresolved", g.unresolved},
          {"same", g.same},
          {"faster", g.faster},
          {"algo_changes", g.algo_changes},
          {"geomean_ratio", g.geomean_ratio}};
}

nlohmann::json SideJson(const answers::CompareSide& s) {
  return {{"median_us", s.median_us}, {"low_us", s.low_us},     {"high_us", s.high_us},
          {"samples", s.samples},     {"job_id", s.run.job_id}, {"device_uuid", s.run.device_uuid},
          {"host", s.run.host},       {"algo", s.algo},         {"replayed", s.replayed}};
}

}  // namespace

void Text(const CompareResult& r, std::ostream& out) {
  const answers::CompareReport& c = r.report;
  out << "compare in " << r.origin << ": new (" << c.query.now << ") against base (" << c.query.base
      << "), " << Grouped(c.all.gemms) << " GEMMs measured on both sides ("
      << tuner::CacheModeName(c.query.mode.cache) << " L2, "
      << tuner::ClockPolicyName(c.query.mode.clocks) << " clocks; "
      << (c.query.algo == tuner::AlgoChoice::kBest ? "each GEMM's fastest verified algorithm"
                                                   : "cuBLASLt's first-choice algorithm")
      << ")\n";
  if (c.replayed) {
    out << "REPLAYED (not measured): a side's runs are replayed from a recorded table; no figure "
           "below is a measurement\n";
  }
  out << "threshold " << Percent(c.query.threshold)
      << ": slower/faster only beyond it AND with the ratio's whole interval past 1; same only "
         "with the whole interval within it; otherwise unresolved (the interval holds when both "
         "medians' 95% intervals hold: coverage >= 90%, less where a row has fewer than 6 "
         "samples)\n";
  for (const auto& [label, runs] :
       {std::pair("base", &c.base_runs), std::pair("new", &c.now_runs)}) {
    for (const std::string& run : *runs) out << label << " run: " << run << "\n";
  }
  const CompareGroup& a = c.all;
  out << "summary: " << a.slower << " slower, " << a.unresolved << " unresolved, " << a.same
      << " same, " << a.faster << " faster; geometric mean ratio " << Decimals(a.geomean_ratio, 4)
      << "; best algorithm changed for " << a.algo_changes << "\n";
  if (c.only_base + c.only_now + c.same_run > 0) {
    out << "left out: " << c.only_base << " GEMMs only in base, " << c.only_now << " only in new, "
        << c.same_run << " whose newest run is the same on both sides\n";
  }
  if (r.left_out > 0) {
    out << r.left_out << " GEMMs compared were not sent by the server (its answer's limit); the "
        << "summaries count them\n";
  }
  GroupTable("by alignment class (the predictor's error class)", c.by_alignment, out);
  GroupTable("by study", c.by_study, out);
  std::vector<const GemmComparison*> shown;
  for (const GemmComparison& g : c.gemms) {
    if (g.verdict != Verdict::kSame || g.algo_changed) shown.push_back(&g);
  }
  if (shown.empty()) {
    out << "no GEMM changed beyond the threshold, and no best algorithm changed\n";
    return;
  }
  out << "GEMMs that changed (slowest first):\n";
  Table t({{"GEMM", Table::Align::kLeft},
           {"base us"},
           {"new us"},
           {"ratio"},
           {"interval"},
           {"verdict", Table::Align::kLeft},
           {"algorithm", Table::Align::kLeft}});
  for (size_t i = 0; i < shown.size() && i < kTextGemms; ++i) {
    const GemmComparison& g = *shown[i];
    t.AddRow({answers::DescribeGemm(g.key), Decimals(g.base.median_us, 1),
              Decimals(g.now.median_us, 1), Decimals(g.ratio, 4),
              RatioInterval(g.ratio_low, g.ratio_high),
              std::string(answers::VerdictName(g.verdict)),
              g.algo_changed ? StrCat(g.base.algo, " -> ", g.now.algo) : "same"});
  }
  t.Print(out);
  if (shown.size() > kTextGemms) {
    out << "... and " << shown.size() - kTextGemms << " more (--json or --csv lists every GEMM)\n";
  }
}

nlohmann::json Json(const CompareResult& r) {
  const answers::CompareReport& c = r.report;
  nlohmann::json gemms = nlohmann::json::array();
  for (const GemmComparison& g : c.gemms) {
    gemms.push_back({{"gpu_model", g.gpu_model},
                     {"m", g.key.m},
                     {"n", g.key.n},
                     {"k", g.key.k},
                     {"batch", g.key.batch},
                     {"dtype", tuner::DTypeName(g.key.dtype)},
                     {"layout", Layout(g.key)},
                     {"alignment", g.alignment},
                     {"study", g.study},
                     {"base", SideJson(g.base)},
                     {"new", SideJson(g.now)},
                     {"ratio", g.ratio},
                     {"ratio_low", g.ratio_low},
                     {"ratio_high", g.ratio_high},
                     {"coverage", g.coverage},
                     {"verdict", answers::VerdictName(g.verdict)},
                     {"algo_changed", g.algo_changed}});
  }
  nlohmann::json alignment = nlohmann::json::array();
  for (const CompareGroup& g : c.by_alignment) alignment.push_back(GroupJson(g));
  nlohmann::json study = nlohmann::json::array();
  for (const CompareGroup& g : c.by_study) study.push_back(GroupJson(g));
  return {{"origin", r.origin},
          {"base", c.query.base},
          {"new", c.query.now},
          {"threshold", c.query.threshold},
          {"mode",
           {{"cache", tuner::CacheModeName(c.query.mode.cache)},
            {"clocks", tuner::ClockPolicyName(c.query.mode.clocks)}}},
          {"algo", tuner::AlgoChoiceName(c.query.algo)},
          {"replayed", c.replayed},
          {"base_runs", c.base_runs},
          {"new_runs", c.now_runs},
          {"summary", GroupJson(c.all)},
          {"by_alignment", alignment},
          {"by_study", study},
          {"only_base", c.only_base},
          {"only_new", c.only_now},
          {"same_run", c.same_run},
          {"left_out", r.left_out},
          {"gemms", gemms}};
}

Table Csv(const CompareResult& r) {
  Table t({{"gpu_model"},
           {"m"},
           {"n"},
           {"k"},
           {"batch"},
           {"dtype"},
           {"layout"},
           {"alignment"},
           {"study"},
           {"base_job"},
           {"base_us"},
           {"base_low_us"},
           {"base_high_us"},
           {"new_job"},
           {"new_us"},
           {"new_low_us"},
           {"new_high_us"},
           {"ratio"},
           {"ratio_low"},
           {"ratio_high"},
           {"coverage"},
           {"verdict"},
           {"algo_changed"},
           {"replayed"}});
  for (const GemmComparison& g : r.report.gemms) {
    t.AddRow({g.gpu_model,
              StrCat(g.key.m),
              StrCat(g.key.n),
              StrCat(g.key.k),
              StrCat(g.key.batch),
              std::string(tuner::DTypeName(g.key.dtype)),
              Layout(g.key),
              g.alignment,
              g.study,
              StrCat(g.base.run.job_id),
              Decimals(g.base.median_us, 3),
              Decimals(g.base.low_us, 3),
              Decimals(g.base.high_us, 3),
              StrCat(g.now.run.job_id),
              Decimals(g.now.median_us, 3),
              Decimals(g.now.low_us, 3),
              Decimals(g.now.high_us, 3),
              Decimals(g.ratio, 5),
              Decimals(g.ratio_low, 5),
              Decimals(g.ratio_high, 5),
              Decimals(g.coverage, 4),
              std::string(answers::VerdictName(g.verdict)),
              g.algo_changed ? "true" : "false",
              g.base.replayed || g.now.replayed ? "true" : "false"});
  }
  return t;
}

}  // namespace crest::cli
