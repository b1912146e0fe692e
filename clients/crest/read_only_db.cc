#include "read_only_db.h"

namespace crest::cli {

absl::StatusOr<std::unique_ptr<store::Store>> OpenExisting(const std::string& path,
                                                           bool read_only) {
  store::StoreOptions options;
  options.read_only = read_only;
  options.create = false;
  auto db = store::Store::Open(path, options);
  // The store says NotFound; for the CLI a missing database is a database
  // problem (exit 1), not bad input.
  if (absl::IsNotFound(db.status())) return absl::FailedPreconditionError(db.status().message());
  return db;
}

}  // namespace crest::cli
