// Internal to the crest CLI: what `crest info` reports, one type whether the
// answer describes this crest (local) or a crestd (--server), so that one
// printer per format prints both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crest/measure/node_facts.h"
#include "crest/tuner/device_info.h"

namespace crest::v1 {
class GetNodeInfoResponse;  // crest.pb.h
}  // namespace crest::v1

namespace crest::cli {

// A backend as the node reports it (measure::ProbeNode makes them).
using BackendEntry = measure::BackendFacts;

struct DeviceEntry {
  std::optional<int> index;  // the CUDA index (local probes only)
  tuner::DeviceInfo device;
  std::optional<tuner::SoftwareInfo> software;  // local probes only
  int64_t free_bytes = 0;
};

struct DatabaseEntry {
  std::string path;
  int schema_version = 0;
  int64_t file_bytes = 0;
  int64_t measurements = 0;
  int64_t verified_measurements = 0;
  int64_t predictions = 0;
  int64_t devices = 0;
  std::map<std::string, int64_t> jobs_by_state;
};

struct InfoReport {
  std::string program;  // "crest" (this binary) or "crestd" (a daemon)
  std::string version;
  std::string server;  // crestd only: the address asked
  std::string host;    // crestd only: its host name
  std::string predictor;
  std::vector<std::string> calibrations;  // in force: "<model_version>: <label>"
  std::vector<BackendEntry> backends;
  std::vector<DeviceEntry> devices;
  std::string device_error;               // why devices is empty
  std::optional<DatabaseEntry> database;  // crestd only
};

// This crest: its build, backends and the CUDA devices it finds.
InfoReport LocalInfo();
// A crestd's answer to GetNodeInfo.
InfoReport RemoteInfo(const v1::GetNodeInfoResponse& response, const std::string& server);

}  // namespace crest::cli
