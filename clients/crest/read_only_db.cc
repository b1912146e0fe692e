#include "read_only_db.h"

namespace crest::cli {

absl::StatusOr<ReadOnlyDb> OpenForReading(const std::string& path, int64_t cublaslt) {
  store::StoreOptions options;
  options.read_only = true;
  auto db = store::Store::Open(path, options);
  if (!db.ok()) return db.status();
  ReadOnlyDb out;
  out.db = *std::move(db);
  if (cublaslt > 0) out.pin.cublaslt = cublaslt;
  return out;
}

}  // namespace crest::cli
