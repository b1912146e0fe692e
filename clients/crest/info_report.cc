#include "info_report.h"

#include "build_info.h"
#include "crest/common/str_cat.h"
#include "crest/measure/node_facts.h"
#include "crest/wire/values.h"

namespace crest::cli {

InfoReport LocalInfo() {
  measure::NodeFacts node = measure::ProbeNode("crest");
  InfoReport r;
  r.program = "crest";
  r.version = build::kVersion;
  r.predictor = std::move(node.predictor);
  r.calibrations = std::move(node.calibrations);
  r.backends = std::move(node.backends);
  for (const auto& d : node.devices) {
    r.devices.push_back({d.index, d.device, d.software, d.free_bytes});
  }
  r.device_error = std::move(node.device_error);
  return r;
}

InfoReport RemoteInfo(const v1::GetNodeInfoResponse& in, const std::string& server) {
  InfoReport r;
  r.program = "crestd";
  r.version = in.version();
  r.server = server;
  r.host = in.host();
  r.predictor = in.model_version();
  r.calibrations.assign(in.calibrations().begin(), in.calibrations().end());
  for (const auto& b : in.backends()) {
    r.backends.push_back({b.name(), b.built(), b.measures(), b.detail()});
  }
  for (const auto& d : in.devices()) {
    r.devices.push_back({std::nullopt, wire::DeviceOf(d), std::nullopt, d.free_bytes()});
  }
  r.device_error = in.device_error();
  const auto& db = in.database();
  r.database = DatabaseEntry{db.path(),
                             db.schema_version(),
                             db.file_bytes(),
                             db.measurements(),
                             db.verified_measurements(),
                             db.predictions(),
                             db.devices(),
                             {db.jobs_by_state().begin(), db.jobs_by_state().end()}};
  return r;
}

}  // namespace crest::cli
