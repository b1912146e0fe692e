// Internal to the crest CLI: following a job on a crestd (`crest sweep
// --server`, `crest jobs watch`) and printing jobs.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli.h"
#include "crest/v1/crest.grpc.pb.h"
#include "remote.h"

namespace crest::cli {

struct FollowOutcome {
  v1::JobEvent last;         // the last event read (final when the job ended)
  int64_t results = 0;       // GemmResults received
  bool interrupted = false;  // SIGINT/SIGTERM stopped the stream
};

// Reads a job event stream to its end, drawing a progress bar with an ETA on
// stderr. SIGINT/SIGTERM cancel the call (for a Sweep stream the daemon then
// cancels the job). `open` starts the call on the given context.
using OpenStream =
    std::function<std::unique_ptr<grpc::ClientReader<v1::JobEvent>>(grpc::ClientContext* context)>;
absl::StatusOr<FollowOutcome> FollowJob(DaemonChannel& connection, const OpenStream& open,
                                        std::ostream& err, const std::string& label);

// Prints a followed job's last event: the sweep's report, as a local
// `crest sweep` prints it, when the event carries one (the job ran to its
// end while followed); else the job's line, and for `crest sweep
// --server` (`sweep_command`) its counts. `server` is the crestd's address,
// said in the report.
void PrintJobEnd(const v1::JobEvent& last, const std::string& server, bool sweep_command, Io& io);

// OK for done; Cancelled / Aborted (with the job's error) otherwise.
absl::Status JobStatus(const v1::Job& job);

}  // namespace crest::cli
