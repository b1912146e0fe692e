// Internal to crestd: the node's database as the daemon starts, and the
// pages its size cap allows. Apart from server.cc so that the server's
// start-up, which does not read the database otherwise, need not include
// the store's interface.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "crest/common/env.h"

namespace crest::service {

// Creates or upgrades the database at `path` once, as the writer would.
// With `quick_check`, SQLite's quick check then runs on it: DataLoss naming
// the file, how many problems and the first, and what to do.
absl::Status OpenNodeDatabase(const std::string& path, Env* env, bool quick_check);

// The pages the database file may take within --max-db-bytes: three
// quarters for the file, a quarter for its write-ahead log (the store
// checkpoints the log at a third of the file's pages).
int64_t MaxDbPages(int64_t max_db_bytes);

}  // namespace crest::service
