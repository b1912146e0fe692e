// Internal to crest::store: the schema and its migrations.
#pragma once

#include "absl/status/status.h"
#include "sqlite.h"

namespace crest::store::internal {

// Brings the database from `version` (as CheckOwnership read it) to
// `target` (≤ kSchemaVersion) in one BEGIN IMMEDIATE transaction, checking
// ownership again under the lock. A read-only connection is only checked: it
// must already be at kSchemaVersion.
absl::Status Migrate(Connection& conn, bool read_only, int version, int target);

// Refuses, without writing anything, a file that is not ours: not a
// database, a newer schema, or tables with no Crest schema version. Returns
// the schema version (0 for an empty file).
absl::StatusOr<int> CheckOwnership(Connection& conn);

// PRAGMA user_version.
absl::StatusOr<int> SchemaVersion(Connection& conn);

}  // namespace crest::store::internal
