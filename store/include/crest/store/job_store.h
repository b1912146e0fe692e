// The jobs part of the Crest result store (store.h): a Store is a JobStore.
// Apart so that crestd's job queue, which needs only this, does not depend
// on the rest of the store's interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/store/records.h"

namespace crest::store {

// The jobs of a node's sweeps: what crestd's queue reads and writes, and
// all it needs of a store (its tests give it a fake). Store is one.
class JobStore {
 public:
  virtual ~JobStore() = default;

  // This host's newest job with this spec, backend and target that has not
  // finished (queued, running or failed), else its newest finished one;
  // NotFound if none. Jobs merged from other hosts are never returned.
  virtual absl::StatusOr<JobRecord> FindJob(const std::string& spec, const std::string& backend,
                                            const std::string& target) = 0;
  virtual absl::StatusOr<JobRecord> CreateJob(const JobRecord& job) = 0;
  virtual absl::StatusOr<JobRecord> GetJob(int64_t id) = 0;
  // Jobs newest first (id below `before_id` when it is positive), at most
  // `limit` (all when 0), their specs left empty unless `with_spec`.
  struct JobListing {
    std::optional<JobState> state;  // none: every state
    int limit = 0;
    int64_t before_id = 0;
    bool with_spec = false;
  };
  virtual absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobListing& listing) = 0;
  // Sets state (and times: started on running, finished on done/failed/
  // cancelled), the plan size, the GEMMs already done and the error. After
  // this, each result inserted for the job adds one to `done` in its own
  // transaction.
  virtual absl::Status UpdateJob(int64_t id, JobState state, int64_t total, int64_t done,
                                 const std::string& error) = 0;
  // Jobs by state ("queued", "done", …): what Stats reports as jobs_by_state,
  // alone (cheap: an index scan).
  virtual absl::StatusOr<std::map<std::string, int64_t>> JobsByState() = 0;
};

}  // namespace crest::store
