// `crest info`'s report (this crest, or a crestd) as text, JSON and CSV.
#include <algorithm>

#include "crest/common/str_cat.h"
#include "info_report.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string DeviceLine(const DeviceEntry& e) {
  const tuner::DeviceInfo& d = e.device;
  std::string line =
      StrCat("  ", e.index ? StrCat("[", *e.index, "] ") : std::string(), d.name, " ", d.uuid, " (",
             d.gpu_model, ", ", d.sm_count, " SMs, cc ", d.cc_major, ".", d.cc_minor, ", L2 ",
             d.l2_bytes >> 20, " MiB, ", d.memory_bytes >> 30, " GiB");
  if (e.free_bytes > 0) line += StrCat(", ", e.free_bytes >> 30, " GiB free");
  line += StrCat(", SM ", d.sm_clock_mhz, " MHz)");
  if (e.software) {
    line += StrCat("; driver ", e.software->driver, ", CUDA runtime ", e.software->cuda_runtime,
                   ", cuBLASLt ", e.software->cublaslt);
  }
  return line;
}

void PrintDatabase(const DatabaseEntry& db, std::ostream& out) {
  out << "database: " << db.path << " (schema " << db.schema_version << ", "
      << Grouped(db.file_bytes) << " bytes): " << Grouped(db.measurements) << " measurements ("
      << Grouped(db.verified_measurements) << " verified), " << Grouped(db.predictions)
      << " predictions, " << db.devices << " devices\njobs:";
  if (db.jobs_by_state.empty()) out << " none";
  for (const auto& [state, n] : db.jobs_by_state) out << " " << state << "=" << n;
  out << '\n';
}

ordered_json DeviceEntryJson(const DeviceEntry& e) {
  ordered_json out;
  if (e.index) out["index"] = *e.index;
  const nlohmann::json device = DeviceJson(e.device);
  for (auto it = device.begin(); it != device.end(); ++it) out[it.key()] = it.value();
  out["free_bytes"] = e.free_bytes;
  if (e.software) out["software"] = SoftwareJson(*e.software);
  return out;
}

ordered_json DatabaseJson(const DatabaseEntry& db) {
  return {{"path", db.path},
          {"schema_version", db.schema_version},
          {"file_bytes", db.file_bytes},
          {"measurements", db.measurements},
          {"verified_measurements", db.verified_measurements},
          {"predictions", db.predictions},
          {"devices", db.devices},
          {"jobs_by_state", db.jobs_by_state}};
}

}  // namespace

void Text(const InfoReport& r, std::ostream& out) {
  out << r.program << " " << r.version;
  if (!r.server.empty()) out << " at " << r.server << " (host " << r.host << ")";
  out << "\npredictor: " << r.predictor << '\n';
  for (const auto& c : r.calibrations) out << "calibration: " << c << '\n';
  out << "backends:\n";
  for (const auto& b : r.backends) {
    out << "  " << b.name << std::string(10 - std::min<size_t>(9, b.name.size()), ' ')
        << (b.built ? "built" : "not built") << " (" << b.detail << ")\n";
  }
  if (r.devices.empty()) {
    out << "devices: none (" << (r.device_error.empty() ? "no CUDA device" : r.device_error)
        << ")\n";
  } else {
    out << "devices:\n";
    for (const auto& d : r.devices) out << DeviceLine(d) << '\n';
  }
  if (r.database) PrintDatabase(*r.database, out);
}

ordered_json Json(const InfoReport& r) {
  ordered_json out{{"program", r.program}, {"version", r.version}};
  if (!r.server.empty()) {
    out["server"] = r.server;
    out["host"] = r.host;
  }
  out["predictor"] = r.predictor;
  out["calibrations"] = r.calibrations;
  out["backends"] = ordered_json::array();
  for (const auto& b : r.backends) {
    out["backends"].push_back(
        {{"name", b.name}, {"built", b.built}, {"measures", b.measures}, {"detail", b.detail}});
  }
  out["devices"] = ordered_json::array();
  for (const auto& d : r.devices) out["devices"].push_back(DeviceEntryJson(d));
  if (r.devices.empty()) out["device_error"] = r.device_error;
  if (r.database) out["database"] = DatabaseJson(*r.database);
  return out;
}

// The backends, one row each.
Table Csv(const InfoReport& r) {
  Table table({{"name", Table::Align::kLeft},
               {"built", Table::Align::kLeft},
               {"measures", Table::Align::kLeft},
               {"detail", Table::Align::kLeft}});
  for (const auto& b : r.backends) {
    table.AddRow({b.name, b.built ? "true" : "false", b.measures ? "true" : "false", b.detail});
  }
  return table;
}

}  // namespace crest::cli
