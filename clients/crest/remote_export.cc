#include "remote_export.h"

#include <filesystem>
#include <fstream>

#include "crest/common/str_cat.h"

namespace crest::cli {

absl::StatusOr<int64_t> DownloadSnapshot(Connection& connection, const std::string& out_path) {
  std::error_code ec;
  if (std::filesystem::exists(out_path, ec)) {
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
    std::filesystem::rename(part, out_path, ec);
    if (ec) problem = absl::InternalError(StrCat(out_path, ": ", ec.message()));
  }
  if (!problem.ok()) {
    std::filesystem::remove(part, ec);
    return problem;
  }
  return written;
}

}  // namespace crest::cli
