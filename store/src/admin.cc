// The administration functions (admin.h): each is the SQLite store's own
// work on its connection, reached from outside the Store interface.
#include "crest/store/admin.h"

#include <utility>

#include "sqlite_store.h"

namespace crest::store {
namespace {

// Runs the SQLite store's `method` on `db`, or says why it cannot.
template <typename Result, typename... Params, typename... Args>
Result Administer(Store& db, Result (internal::SqliteStore::*method)(Params...), Args&&... args) {
  auto* sqlite = dynamic_cast<internal::SqliteStore*>(&db);
  if (sqlite == nullptr) {
    return absl::FailedPreconditionError(
        "database administration needs a store opened by Store::Open (a SQLite file)");
  }
  return (sqlite->*method)(std::forward<Args>(args)...);
}

}  // namespace

absl::Status ExportTo(Store& db, const std::string& out_path) {
  return Administer(db, &internal::SqliteStore::ExportTo, out_path);
}

absl::StatusOr<MergeReport> MergeFrom(Store& db, const std::string& snapshot_path) {
  return Administer(db, &internal::SqliteStore::MergeFrom, snapshot_path);
}

absl::StatusOr<CheckReport> Check(Store& db) {
  return Administer(db, &internal::SqliteStore::Check);
}

absl::StatusOr<std::vector<std::string>> QuickCheck(Store& db) {
  return Administer(db, &internal::SqliteStore::QuickCheck);
}

absl::StatusOr<DbStats> Stats(Store& db) { return Administer(db, &internal::SqliteStore::Stats); }

absl::StatusOr<int64_t> Import(Store& db, const ImportBatch& batch) {
  return Administer(db, &internal::SqliteStore::InsertImported, batch);
}

}  // namespace crest::store
