// Database administration beside the results store, as RocksDB's utilities
// sit beside its DB: export, merge, check, stats and import work on an open
// store's database file and are no part of the Store interface that answers
// and sweeps use. Each returns FailedPrecondition for a Store that is not one
// Store::Open gave (a test's fake).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crest/store/records.h"

namespace crest::store {

class Store;  // crest/store/store.h

struct MergeReport {
  int64_t devices = 0;
  int64_t software = 0;
  int64_t jobs = 0;
  int64_t measurements = 0;
  int64_t predictions = 0;
  int64_t imported = 0;
  int64_t races = 0;
};

struct CheckReport {
  bool ok = false;
  int schema_version = 0;
  std::vector<std::string> problems;  // empty when ok
};

struct DbStats {
  int schema_version = 0;
  int64_t file_bytes = 0;
  int64_t devices = 0;
  int64_t software = 0;
  int64_t measurements = 0;
  int64_t verified_measurements = 0;
  int64_t predictions = 0;
  int64_t imported = 0;
  std::map<std::string, int64_t> jobs_by_state;
  std::map<std::string, int64_t> measurements_by_gpu;
  std::map<std::string, int64_t> predictions_by_gpu;
  std::map<std::string, int64_t> imported_by_gpu;
};

// Writes a consistent snapshot to `out_path` (VACUUM INTO), while other
// connections keep writing. Refuses an existing `out_path`.
absl::Status ExportTo(Store& db, const std::string& out_path);
// Merges a snapshot in one transaction. Idempotent: merging the same
// snapshot again adds nothing. Devices, software and jobs are matched by
// identity; results by their uid (and predictions by their key).
absl::StatusOr<MergeReport> MergeFrom(Store& db, const std::string& snapshot_path);
// SQLite's integrity check and the schema version.
absl::StatusOr<CheckReport> Check(Store& db);
// SQLite's quick check (pages and b-trees, not index contents): what is
// wrong, empty when nothing is. For a check at start, where Check would take
// too long on a large file.
absl::StatusOr<std::vector<std::string>> QuickCheck(Store& db);
// What the database holds, counted (result counts by GPU model, jobs by
// state, the file's size).
absl::StatusOr<DbStats> Stats(Store& db);
// Imports timings from another tool in one transaction (kept apart from the
// engine's measurements: calibration input, never an answer); returns the
// rows added (a batch already imported adds none).
absl::StatusOr<int64_t> Import(Store& db, const ImportBatch& batch);

}  // namespace crest::store
