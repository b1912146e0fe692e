// What every ranking answer says the same way: its runs and its speed-ups.
#include <map>

#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/timing_ops.h"
#include "outputs.h"

namespace crest::cli {

std::string RunColumn(const std::vector<tuner::RunInfo>& runs, bool pooled) {
  if (runs.empty()) return "-";
  if (pooled) return StrCat("pool of ", runs.size());
  return runs.size() == 1 ? StrCat("job ", runs.front().job_id) : StrCat(runs.size(), " runs");
}

nlohmann::json RunsJson(const std::vector<tuner::RunInfo>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const tuner::RunInfo& r : runs) {
    out.push_back({{"job_id", r.job_id},
                   {"job_uid", r.job_uid},
                   {"name", r.name},
                   {"started_us", r.started_us},
                   {"device_uuid", r.device_uuid},
                   {"host", r.host},
                   {"description", tuner::DescribeRun(r)}});
  }
  return out;
}

void AddOriginJson(const answers::AnswerOrigin& origin, nlohmann::json& doc) {
  const bool db = origin.database;
  doc["answered_by"] = origin.description;
  doc["run_choice"] = db ? nlohmann::json(answers::RunChoiceName(origin.options.runs)) : nullptr;
  doc["algo_choice"] = db ? nlohmann::json(tuner::AlgoChoiceName(origin.options.algo)) : nullptr;
}

nlohmann::json TimingJson(const tuner::Timing& t) {
  return {{"time_us", t.time_us},       {"time_low_us", t.low_us},
          {"time_high_us", t.high_us},  {"source", tuner::SourceName(t.source)},
          {"provenance", t.provenance}, {"runs", RunsJson(t.runs)},
          {"pooled", t.pooled}};
}

std::string AlgoChoiceText(tuner::AlgoChoice choice) {
  return choice == tuner::AlgoChoice::kDefault
             ? "each GEMM's cuBLASLt first choice, what a call that does not pin an algorithm "
               "runs (--algo default)"
             : "each GEMM's fastest verified algorithm of Crest's search (--algo best)";
}

std::string RunsLine(const std::vector<tuner::RunInfo>& runs,
                     const answers::AnswerOptions& options) {
  if (runs.empty()) return "";
  std::vector<std::string> names;
  for (const tuner::RunInfo& r : runs) names.push_back(tuner::DescribeRun(r));
  const std::string algo = StrCat("\nalgorithms: ", AlgoChoiceText(options.algo));
  if (options.runs == answers::RunChoice::kAll) {
    return StrCat(
        "runs pooled (--runs all): per GEMM the median of the runs' medians, the "
        "interval covering their spread; ",
        runs.size(), " run(s): ", StrJoin(names, ", "), algo);
  }
  return StrCat(
      "runs: each candidate from the most recent run that measured all of its GEMMs "
      "(--runs latest): ",
      StrJoin(names, ", "), algo);
}

std::string SpeedupCell(double speedup, tuner::Source row, tuner::Source basis, bool plain) {
  if (speedup <= 0) return plain ? "" : "-";
  if (plain) return Fixed(speedup, 3);
  return Fixed(speedup, 3) + "x" + (basis != row ? "^" : "");
}

std::string CountKinds(const std::vector<tuner::Source>& sources) {
  std::map<int, std::pair<tuner::Source, int>> by_order;
  for (tuner::Source s : sources) {
    auto& [source, n] = by_order[tuner::KindOrder(s)];
    source = s;
    ++n;
  }
  std::string out;
  for (const auto& [order, count] : by_order) {
    out += StrCat(out.empty() ? "" : ", ", count.second, " ", tuner::SourceName(count.first));
  }
  return out;
}

}  // namespace crest::cli
