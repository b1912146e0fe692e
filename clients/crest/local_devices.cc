#include "local_devices.h"

#include "crest/sweep/backend_factory.h"
#include "json_views.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace crest::cli {

nlohmann::json BackendsAndDevices() {
  nlohmann::json out;
  out["backends"] =
      nlohmann::json::array({{{"name", "model"}, {"built", true}, {"measures", false}}});
  out["backends"].push_back({{"name", "cublaslt"},
                             {"built", sweep::MeasuringBackendBuilt()},
                             {"measures", true},
                             {"why", std::string(sweep::MeasuringBackendReason())}});
  out["devices"] = nlohmann::json::array();
#ifdef CREST_HAVE_CUDA
  auto devices = measure::ProbeDevices();
  if (!devices.ok()) {
    out["device_error"] = std::string(devices.status().message());
  } else {
    for (const auto& d : *devices) {
      nlohmann::json dev = DeviceJson(d.device);
      dev["index"] = d.index;
      dev["free_bytes"] = d.free_bytes;
      dev["software"] = SoftwareJson(d.software);
      out["devices"].push_back(dev);
    }
  }
#else
  out["device_error"] = "this crest was built without CUDA, so it cannot look for devices";
#endif
  return out;
}

}  // namespace crest::cli
