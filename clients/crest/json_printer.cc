// The machine form of every answer: one JSON document, schema_version first.
#include <ostream>

#include "json_views.h"
#include "outputs.h"
#include "printer.h"

namespace crest::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

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

class JsonPrinter final : public Printer {
 public:
  explicit JsonPrinter(std::ostream& out) : out_(out) {}

  void Info(const InfoReport& r) override {
    ordered_json out{{"schema_version", kJsonSchemaVersion},
                     {"program", r.program},
                     {"version", r.version}};
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
    Emit(out);
  }
  void Dff(const DffResult& r) override { Emit(DffJson(r)); }
  void Vocab(const VocabResult& r) override { Emit(VocabJson(r)); }
  void Design(const DesignResult& r) override { Emit(DesignJson(r)); }
  void Lookup(const LookupResult& r) override { Emit(LookupJson(r)); }
  void Explain(const ExplainResult& r) override { Emit(ExplainJson(r)); }

 private:
  void Emit(const ordered_json& document) { out_ << document.dump(2) << '\n'; }
  void Emit(const nlohmann::json& document) { out_ << document.dump(2) << '\n'; }
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Printer> MakeJsonPrinter(std::ostream& out) {
  return std::make_unique<JsonPrinter>(out);
}

}  // namespace crest::cli
