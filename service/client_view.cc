#include "client_view.h"

#include <string>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/v1/crest.pb.h"
#include "crest/wire/values.h"
#include "server_paths.h"

namespace crest::service {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Messages quote what the client sent; a quote of a huge field would make
  // trailing metadata the client refuses (and break its connection).
  std::string message = WithoutServerPaths(std::string(status.message()));
  if (message.size() > kMaxStatusMessageBytes) {
    const size_t cut = message.size() - kMaxStatusMessageBytes;
    message.resize(kMaxStatusMessageBytes);
    message += StrCat("... (", cut, " more bytes)");
  }
  // absl and gRPC share their numeric status codes.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::move(message));
}

void FillJob(const store::JobRecord& job, v1::Job* out) {
  wire::Fill(job, out);
  if (!job.error.empty()) out->set_error(WithoutServerPaths(job.error));
}

}  // namespace crest::service
