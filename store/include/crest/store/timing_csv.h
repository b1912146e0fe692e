// GEMM timings from another tool, as `crest db import --csv` reads them: one
// row per GEMM with columns m, n, k, dtype, batch (default 1), layout
// (default NT) and the time in µs (`time_us`, else `median_us`, or the
// column named); the device in a `device` column or given, and how the
// times were taken in a `tool` (or `note`) column or given. Other columns
// are ignored, so PyTorch scripts' CSVs import as they are.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "crest/store/records.h"

namespace crest::store {

struct TimingCsvOptions {
  std::string device;                    // used when the file has no device column
  std::string tool;                      // used when the file has no tool/note column
  std::string time_column;               // empty: time_us, else median_us
  std::string device_flag = "--device";  // how the caller's user gives `device`
};

// Reads the file into a batch for the store. InvalidArgument names the file,
// line and column of the first bad value; a device that is not in the GPU
// catalogue, more than one device in a file, or no device or tool at all are
// refused the same way.
absl::StatusOr<store::ImportBatch> ReadTimingCsv(const std::string& path,
                                                 const TimingCsvOptions& options);

}  // namespace crest::store
