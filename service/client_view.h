// Internal to crestd: what a client receives of an error or a job. Both go
// without the node's paths (server_paths.h); the log and the database keep
// the whole text.
#pragma once

#include <grpcpp/support/status.h>

#include <cstddef>

#include "absl/status/status.h"
#include "crest/store/records.h"

namespace crest::v1 {
class Job;  // crest/v1/crest.pb.h: a caller filling one has it
}  // namespace crest::v1

namespace crest::service {

// The status for gRPC, its message without the node's paths and cut to
// kMaxStatusMessageBytes.
grpc::Status ToGrpc(const absl::Status& status);
// A job as a client receives it (wire::Fill), its error without the node's
// paths.
void FillJob(const store::JobRecord& job, v1::Job* out);
inline constexpr size_t kMaxStatusMessageBytes = 1024;

}  // namespace crest::service
