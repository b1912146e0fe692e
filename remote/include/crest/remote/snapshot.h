// Downloading a crestd's database snapshot (ExportResults) into a file, for
// `crest db export --server` and fleet pulls.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "crest/remote/channel.h"

namespace crest::remote {

// Streams the snapshot into `out_path` (refused when it exists), through a
// temporary file renamed into place only when every byte arrived; returns
// the bytes written. Nothing is left at `out_path` on failure.
absl::StatusOr<int64_t> DownloadSnapshot(DaemonChannel& connection, const std::string& out_path);

}  // namespace crest::remote
