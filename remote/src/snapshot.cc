#include "crest/remote/snapshot.h"

#include <filesystem>
#include <fstream>

#include "crest/common/env.h"
#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"

namespace crest::remote {

absl::StatusOr<int64_t> DownloadSnapshot(DaemonChannel& connection, const std::string& out_path) {
  auto exists = DefaultEnv().Exists(out_path);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    return absl::AlreadyExistsError(StrCat(out_path, ": exists; a snapshot goes to a new file"));
  }
  const std::string part = out_path + ".part";
  std::ofstream out(part, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(StrCat(part, ": cannot write"));
  auto context = connection.Context(/*with_deadline=*/false);
  auto reader = connection.stub().ExportResults(context.get(), v1::ExportResultsRequest());
  v1::ExportChunk chunk;
  int64_t written = 0;
  int64_t total = -1;
  absl::Status problem;
  while (reader->Read(&chunk)) {
    if (chunk.offset() != written) {
      problem =
          absl::DataLossError(StrCat("snapshot chunk at ", chunk.offset(), ", expected ", written));
      context->TryCancel();
      break;
    }
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    written += static_cast<int64_t>(chunk.data().size());
    total = chunk.total_bytes();
  }
  const grpc::Status status = reader->Finish();
  out.close();
  if (problem.ok() && !status.ok()) problem = connection.Error(status);
  if (problem.ok() && !out) problem = absl::ResourceExhaustedError(StrCat(part, ": write failed"));
  if (problem.ok() && written != total) {
    problem = absl::DataLossError(
        StrCat("snapshot ended at ", written, " of ", total, " bytes from ", connection.server()));
  }
  if (problem.ok()) {
    std::error_code ec;
    std::filesystem::rename(part, out_path, ec);
    problem = FromErrorCode(ec, StrCat("cannot rename '", part, "' to '", out_path, "'"));
  }
  if (!problem.ok()) {
    (void)DefaultEnv().RemoveFile(part);  // the download's error is the one to report
    return problem;
  }
  return written;
}

}  // namespace crest::remote
