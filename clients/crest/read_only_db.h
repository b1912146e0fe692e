// Internal to the crest CLI: opening a result database for reading, with an
// optional cuBLASLt pin (`dff --db`, `lookup`, `calibrate`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "crest/store/store.h"

namespace crest::cli {

struct ReadOnlyDb {
  std::unique_ptr<store::Store> db;
  store::SoftwarePin pin;
};

// Opens `path` read-only (never creating it); cublaslt > 0 pins lookups.
absl::StatusOr<ReadOnlyDb> OpenForReading(const std::string& path, int64_t cublaslt);

}  // namespace crest::cli
