// Database files (`crest db export|merge|check|stats|import`) as text, JSON
// and CSV.
#include <array>
#include <map>

#include "crest/common/str_cat.h"
#include "db_reports.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

nlohmann::json MergeJson(const store::MergeReport& r) {
  return {{"devices", r.devices},
          {"software", r.software},
          {"jobs", r.jobs},
          {"measurements", r.measurements},
          {"predictions", r.predictions},
          {"imported", r.imported},
          {"races", r.races}};
}

}  // namespace

void Text(const DbExportReport& r, std::ostream& out) {
  out << "exported " << r.from << " to " << r.snapshot << "\n";
}
nlohmann::json Json(const DbExportReport& r) {
  return {{"from", r.from}, {"snapshot", r.snapshot}};
}
Table Csv(const DbExportReport& r) {
  Table table({{"from", Table::Align::kLeft}, {"snapshot", Table::Align::kLeft}});
  table.AddRow({r.from, r.snapshot});
  return table;
}

Table Csv(const DbMergeReport& r) {
  Table table({{"snapshot", Table::Align::kLeft},
               {"+measurements"},
               {"+predictions"},
               {"+imported"},
               {"+jobs"},
               {"+devices"},
               {"+software"}});
  for (const auto& [snapshot, m] : r.merged) {
    table.AddRow({snapshot, Grouped(m.measurements), Grouped(m.predictions), Grouped(m.imported),
                  Grouped(m.jobs), Grouped(m.devices), Grouped(m.software)});
  }
  return table;
}
void Text(const DbMergeReport& r, std::ostream& out) {
  for (const auto& [snapshot, m] : r.merged) {
    out << "merged " << snapshot << ": +" << m.measurements << " measurements, +" << m.predictions
        << " predictions, +" << m.imported << " imported timings, +" << m.races << " races, +"
        << m.jobs << " jobs, +" << m.devices << " devices, +" << m.software
        << " software versions\n";
  }
}
nlohmann::json Json(const DbMergeReport& r) {
  nlohmann::json merged = nlohmann::json::array();
  for (const auto& [snapshot, m] : r.merged) {
    nlohmann::json one = MergeJson(m);
    one["snapshot"] = snapshot;
    merged.push_back(std::move(one));
  }
  return {{"into", r.into}, {"merged", merged}};
}

void Text(const DbCheckReport& r, std::ostream& out) {
  if (r.check.ok) {
    out << r.db << ": ok (schema version " << r.check.schema_version << ", integrity ok)\n";
    return;
  }
  for (const auto& p : r.check.problems) out << r.db << ": " << p << '\n';
}
nlohmann::json Json(const DbCheckReport& r) {
  return {{"db", r.db},
          {"ok", r.check.ok},
          {"db_schema_version", r.check.schema_version},
          {"problems", r.check.problems}};
}
Table Csv(const DbCheckReport& r) {
  Table table({{"db", Table::Align::kLeft},
               {"ok", Table::Align::kLeft},
               {"schema_version"},
               {"problems", Table::Align::kLeft}});
  table.AddRow({r.db, r.check.ok ? "true" : "false", std::to_string(r.check.schema_version),
                StrJoin(r.check.problems, "; ")});
  return table;
}

void Text(const DbStatsReport& r, std::ostream& out) {
  const store::DbStats& s = r.stats;
  out << r.db << ": schema version " << s.schema_version << ", " << Grouped(s.file_bytes)
      << " bytes\n  " << Grouped(s.measurements) << " measurements ("
      << Grouped(s.verified_measurements) << " verified), " << Grouped(s.predictions)
      << " predictions, " << s.devices << " devices, " << s.software << " software versions\n";
  for (const auto& [gpu, n] : s.measurements_by_gpu) {
    out << "  measured on " << gpu << ": " << Grouped(n) << "\n";
  }
  for (const auto& [gpu, n] : s.predictions_by_gpu) {
    out << "  predicted for " << gpu << ": " << Grouped(n) << "\n";
  }
  for (const auto& [gpu, n] : s.imported_by_gpu) {
    out << "  imported (other tools) for " << gpu << ": " << Grouped(n) << "\n";
  }
  out << "  jobs:";
  if (s.jobs_by_state.empty()) out << " none";
  for (const auto& [state, n] : s.jobs_by_state) out << " " << state << " " << n;
  out << '\n';
}
nlohmann::json Json(const DbStatsReport& r) {
  const store::DbStats& s = r.stats;
  return {{"db", r.db},
          {"db_schema_version", s.schema_version},
          {"file_bytes", s.file_bytes},
          {"devices", s.devices},
          {"software", s.software},
          {"measurements", s.measurements},
          {"verified_measurements", s.verified_measurements},
          {"predictions", s.predictions},
          {"imported", s.imported},
          {"jobs_by_state", s.jobs_by_state},
          {"measurements_by_gpu", s.measurements_by_gpu},
          {"predictions_by_gpu", s.predictions_by_gpu},
          {"imported_by_gpu", s.imported_by_gpu}};
}
// One row per GPU model: what the file holds of it.
Table Csv(const DbStatsReport& r) {
  const store::DbStats& s = r.stats;
  Table table({{"gpu", Table::Align::kLeft}, {"measurements"}, {"predictions"}, {"imported"}});
  std::map<std::string, std::array<int64_t, 3>> by_gpu;
  for (const auto& [gpu, n] : s.measurements_by_gpu) by_gpu[gpu][0] = n;
  for (const auto& [gpu, n] : s.predictions_by_gpu) by_gpu[gpu][1] = n;
  for (const auto& [gpu, n] : s.imported_by_gpu) by_gpu[gpu][2] = n;
  for (const auto& [gpu, n] : by_gpu) {
    table.AddRow({gpu, std::to_string(n[0]), std::to_string(n[1]), std::to_string(n[2])});
  }
  return table;
}

void Text(const DbImportReport& r, std::ostream& out) {
  out << "imported " << r.added << " GEMM timings (" << r.rows - r.added << " already there) from "
      << r.file << " into " << r.db << "\n  device " << r.device << " (" << r.gpu_model
      << "); tool: " << r.tool
      << "\n  imported, not measured by Crest: they never answer dff or lookup; "
         "`crest calibrate --db "
      << r.db << "` can fit the predictor to them\n";
}
nlohmann::json Json(const DbImportReport& r) {
  return {{"db", r.db},
          {"source", tuner::SourceName(tuner::Source::kImported)},
          {"file", r.file},
          {"gpu", r.gpu_model},
          {"device", r.device},
          {"tool", r.tool},
          {"rows", r.rows},
          {"added", r.added},
          {"already_present", r.rows - r.added}};
}
Table Csv(const DbImportReport& r) {
  Table table({{"file", Table::Align::kLeft},
               {"gpu", Table::Align::kLeft},
               {"device", Table::Align::kLeft},
               {"tool", Table::Align::kLeft},
               {"rows"},
               {"added"},
               {"source", Table::Align::kLeft}});
  table.AddRow({r.file, r.gpu_model, r.device, r.tool, std::to_string(r.rows),
                std::to_string(r.added), std::string(tuner::SourceName(tuner::Source::kImported))});
  return table;
}

}  // namespace crest::cli
