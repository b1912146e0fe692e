// Internal to the crest CLI: what the commands that run or follow sweeps
// report (`crest sweep`, here or by a crestd; `crest jobs`; `fleet
// submit|pull`), one type each, printed by the printers (printer.h) like the
// answers of results.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crest/answers/fleet_health.h"
#include "crest/store/admin.h"
#include "crest/sweep/sweep_report.h"
#include "crest/v1/crest.pb.h"

namespace crest::cli {

// `crest jobs show|submit|cancel`: one job of a crestd.
struct JobReport {
  v1::Job job;
  bool detailed = false;  // show: every field; else one line
  std::string note;       // e.g. "(stops before its next GEMM)"
};

// `crest jobs list`
struct JobListReport {
  std::vector<v1::Job> jobs;
  int64_t next_before_id = 0;  // > 0: more jobs older than these (`--before`)
};

// `crest jobs watch`, `jobs submit --wait`, `crest sweep --server`: a job's
// last event when it ended.
struct JobEventReport {
  v1::JobEvent event;
  std::string server;  // sweeps: the crestd that ran it; empty for watch
};

// `crest sweep`: a sweep's end, run here (--db) or by a crestd (--server,
// rebuilt from the job's final event), printed the same way.
struct SweepReport {
  sweep::SweepReport sweep;
  std::string db;      // run here: the database file
  std::string server;  // run by a crestd: its address
};

// `crest fleet submit|pull`: one row per node.
struct FleetNodeReport {
  std::string target;
  bool ok = false;
  std::string error;
  v1::Job job;                // submit
  int64_t bytes = 0;          // pull: the snapshot's size
  store::MergeReport merged;  // pull
};

struct FleetReport {
  bool pull = false;
  std::string into;  // pull: the catalogue
  std::vector<FleetNodeReport> nodes;
  // pull: the catalogue's devices against their fleet, or why not
  std::optional<answers::FleetHealth> health;
  std::string health_error;
};

}  // namespace crest::cli
