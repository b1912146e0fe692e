// A bench's synthetic sweep as a job in its database: started, then marked
// done as sweep/runner.cc marks a finished sweep (which packs its runs,
// store/src/run_packs.h), so a bench reads what a node's sweeps leave.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "crest/store/store.h"

namespace crest::bench {

// A new cuBLASLt job of `spec` (JSON text) on device `target`: its id.
inline absl::StatusOr<int64_t> StartJob(store::Store& db, const std::string& spec,
                                        const std::string& target) {
  store::JobRecord job;
  job.spec = spec;
  job.backend = "cublaslt";
  job.target = target;
  auto created = db.CreateJob(job);
  if (!created.ok()) return created.status();
  return created->id;
}

// Job `job_id` done, all `gemms` of it.
inline absl::Status FinishJob(store::Store& db, int64_t job_id, int64_t gemms) {
  return db.UpdateJob(job_id, store::JobState::kDone, gemms, gemms, "");
}

}  // namespace crest::bench
