// Internal to crest::store: the schema and its migrations.
#pragma once

#include "absl/status/status.h"
#include "sqlite.h"

namespace crest::store::internal {

// Brings the database to `target` (≤ kSchemaVersion) in one BEGIN IMMEDIATE
// transaction; refuses a file whose version is newer than kSchemaVersion.
// A read-only connection is only checked: it must already be at kSchemaVersion.
absl::Status Migrate(Connection& conn, bool read_only, int target);

// Refuses, without writing anything, a file that is not ours: a newer
// schema, or tables with no Crest schema version.
absl::Status CheckOwnership(Connection& conn);

// PRAGMA user_version.
absl::StatusOr<int> SchemaVersion(Connection& conn);

}  // namespace crest::store::internal
