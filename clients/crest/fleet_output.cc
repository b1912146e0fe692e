// `crest fleet submit|pull`: one row per node, as text, JSON and CSV.
#include <algorithm>

#include "crest/common/str_cat.h"
#include "crest/wire/values.h"
#include "job_reports.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

nlohmann::json NodeJson(const FleetNodeReport& n, bool pull) {
  nlohmann::json j{{"target", n.target}, {"ok", n.ok}, {"error", n.error}};
  if (pull) {
    j["bytes"] = n.bytes;
    j["merged"] = {{"measurements", n.merged.measurements},
                   {"predictions", n.merged.predictions},
                   {"jobs", n.merged.jobs},
                   {"devices", n.merged.devices},
                   {"software", n.merged.software}};
  } else if (n.job.id() != 0) {
    j["job"] = {{"id", n.job.id()},
                {"state", wire::JobStateText(n.job.state())},
                {"done", n.job.done()},
                {"total", n.job.total()}};
  }
  return j;
}

}  // namespace

Table Csv(const FleetReport& r) {
  if (r.pull) {
    Table table({{"node", Table::Align::kLeft},
                 {"bytes"},
                 {"+measurements"},
                 {"+predictions"},
                 {"+jobs"},
                 {"+devices"},
                 {"problem", Table::Align::kLeft}});
    for (const auto& n : r.nodes) {
      table.AddRow({n.target, n.ok ? Grouped(n.bytes) : "-", Grouped(n.merged.measurements),
                    Grouped(n.merged.predictions), Grouped(n.merged.jobs),
                    Grouped(n.merged.devices), n.error.empty() ? "-" : n.error});
    }
    return table;
  }
  Table table({{"node", Table::Align::kLeft},
               {"job"},
               {"state", Table::Align::kLeft},
               {"done"},
               {"total"},
               {"problem", Table::Align::kLeft}});
  for (const auto& n : r.nodes) {
    const bool has_job = n.job.id() != 0;
    table.AddRow({n.target, has_job ? std::to_string(n.job.id()) : "-",
                  has_job ? wire::JobStateText(n.job.state()) : "-", std::to_string(n.job.done()),
                  std::to_string(n.job.total()), n.error.empty() ? "-" : n.error});
  }
  return table;
}

void Text(const FleetReport& r, std::ostream& out) {
  Csv(r).Print(out);
  if (!r.pull) return;
  const bool any =
      std::any_of(r.nodes.begin(), r.nodes.end(), [](const auto& n) { return n.bytes > 0; });
  out << "catalogue: " << r.into << (any ? "\n" : " (unchanged: nothing downloaded)\n");
  if (r.health.has_value()) FleetHealthText(*r.health, out);
  if (!r.health_error.empty()) out << "slow GPUs not checked: " << r.health_error << "\n";
}

nlohmann::json Json(const FleetReport& r) {
  nlohmann::json out{{"nodes", nlohmann::json::array()}};
  if (r.pull) out["into"] = r.into;
  if (r.health.has_value()) out["fleet_health"] = FleetHealthJson(*r.health);
  if (!r.health_error.empty()) out["fleet_health_error"] = r.health_error;
  for (const auto& n : r.nodes) out["nodes"].push_back(NodeJson(n, r.pull));
  return out;
}

}  // namespace crest::cli
