#include "info_report.h"

#include "build_info.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/predictor.h"
#include "crest/wire/convert.h"

namespace crest::cli {

InfoReport LocalInfo() {
  InfoReport r;
  r.program = "crest";
  r.version = build::kVersion;
  r.predictor = std::string(kPredictorVersion);
  for (const auto& c : ActiveCalibrations()) {
    r.calibrations.push_back(StrCat(c->model_version, ": ", c->label));
  }
  r.backends.push_back({"model", true, false,
                        StrCat("analytic predictor ", kPredictorVersion, ", predictions only")});
  r.backends.push_back({"cublaslt", measure::CublasLtBackendBuilt(), true,
                        std::string(measure::CublasLtBackendReason())});
  if (!measure::CublasLtBackendBuilt()) {
    r.device_error = "this crest was built without CUDA, so it cannot look for devices";
    return r;
  }
  auto devices = measure::ProbeDevices();
  if (!devices.ok()) {
    r.device_error = std::string(devices.status().message());
  } else {
    for (const auto& d : *devices)
      r.devices.push_back({d.index, d.device, d.software, d.free_bytes});
  }
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
