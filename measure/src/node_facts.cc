#include "crest/measure/node_facts.h"

#include "crest/common/str_cat.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/predictor.h"

namespace crest::measure {

NodeFacts ProbeNode(std::string_view program) {
  NodeFacts node;
  node.predictor = std::string(tuner::kPredictorVersion);
  for (const auto& c : tuner::ActiveCalibrations()) {
    node.calibrations.push_back(StrCat(c->model_version, ": ", c->label));
  }
  node.backends.push_back(
      {"model", true, false,
       StrCat("analytic predictor ", tuner::kPredictorVersion, ", predictions only")});
  node.backends.push_back(
      {"cublaslt", CublasLtBackendBuilt(), true, std::string(CublasLtBackendReason())});
  if (!CublasLtBackendBuilt()) {
    node.device_error = StrCat("no CUDA device: this ", program,
                               " was built without CUDA, so it cannot look for devices");
    return node;
  }
  auto devices = ProbeDevices();
  if (!devices.ok()) {
    node.device_error = std::string(devices.status().message());
  } else {
    node.devices = *std::move(devices);
  }
  return node;
}

}  // namespace crest::measure
