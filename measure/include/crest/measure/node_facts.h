// What a node can do, as `crest info` reports for this machine and crestd's
// GetNodeInfo for its own: the predictor and calibrations in force, the
// backends (built or not, and why) and the CUDA devices, or why there are
// none. One producer for both, so they never tell a node's facts apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "crest/measure/cuda_backend.h"

namespace crest::measure {

struct BackendFacts {
  std::string name;  // "model", "cublaslt"
  bool built = false;
  bool measures = false;
  std::string detail;  // what it is, or why it was not built
};

struct NodeFacts {
  std::string predictor;                  // the model's version
  std::vector<std::string> calibrations;  // in force: "<model_version>: <label>"
  std::vector<BackendFacts> backends;     // model, then cublaslt
  std::vector<ProbedDevice> devices;
  std::string device_error;  // why devices is empty
};

// This process's node; `program` ("crest", "crestd") names it where the build
// has no CUDA. Probing devices loads the engine only when the driver sees one.
NodeFacts ProbeNode(std::string_view program);

}  // namespace crest::measure
