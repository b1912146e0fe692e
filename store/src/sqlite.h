// Internal to crest::store: thin RAII over the SQLite C API, and the one
// place SQLite result codes become absl::Status.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace crest::store::internal {

// Translates a SQLite result code into a Status whose message names the
// database file, what was being done and SQLite's own words.
absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view path, std::string_view doing);

class Statement;

// `path` as an SQLite URI ("file:PATH?QUERY"), its %, ? and # escaped.
std::string FileUri(const std::string& path, std::string_view query);

// One connection. Not thread-safe: one thread uses a Connection at a time.
class Connection final {
 public:
  struct Options {
    bool read_only = false;
    bool create = true;            // create the file if missing (writers only)
    int busy_timeout_ms = 10000;   // how long to wait for a lock before SQLITE_BUSY
    bool synchronous_full = true;  // fsync every commit (else NORMAL: safe against
                                   // crashes of the process, not of the machine)
    const char* vfs = nullptr;     // SQLite VFS name; nullptr = the default
    bool memory_map = true;        // read through mmap (see StoreOptions::memory_map)
  };

  // Opens the file. Reads and writes nothing yet ("not a database" shows up
  // at the first read): call Configure once the file is known to be ours.
  // Read-only, a WAL-mode file that SQLite cannot read because it may not
  // create the shared-memory file beside it (a read-only directory or share)
  // and that has no write-ahead log (so no writer is at work) is opened as
  // immutable: the normal case of a catalogue on a read-only share.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path,
                                                          const Options& options);
  // Page cache and memory map; for a writable connection also WAL mode and
  // the durability level, which write to the file's header.
  absl::Status Configure(const Options& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements with no results.
  absl::Status Exec(std::string_view sql, std::string_view doing);
  // A cached prepared statement for `sql`, reset and unbound. The pointer
  // stays valid for the connection's life.
  absl::StatusOr<Statement*> Prepare(const std::string& sql);

  absl::Status Begin(std::string_view doing);  // BEGIN IMMEDIATE
  // Ends a write's or a read's transaction, by a statement prepared once.
  absl::Status Commit(std::string_view doing);
  void Rollback();  // best effort; never fails loudly
  // A read transaction (BEGIN DEFERRED: its snapshot is taken at its first
  // read), by a statement prepared once (every answer begins one); Commit
  // ends it.
  absl::Status BeginRead(std::string_view doing);
  // Inside a transaction, begun by this connection's BEGIN.
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

  int64_t LastInsertRowId() const;
  int Changes() const;
  sqlite3* raw() const { return db_; }
  const std::string& path() const { return path_; }
  absl::Status Error(int rc, std::string_view doing) const;

 private:
  Connection(sqlite3* db, std::string path);
  sqlite3* db_;
  std::string path_;
  // By SQL text; hashed, as texts share long prefixes (a d_ff window's
  // scans differ near the end).
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

// A prepared statement. Bind indexes are 1-based. Rows are read by column
// name — the AS alias, else the column's own name without its table — so
// that a column added to a SELECT shifts nothing.
class Statement final {
 public:
  Statement(sqlite3_stmt* stmt, const Connection* conn) : stmt_(stmt), conn_(conn) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Reset();
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& BindBlob(int index, const std::vector<uint8_t>& value);
  Statement& BindNull(int index);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Steps once: true when a row is ready, false when done.
  absl::StatusOr<bool> Step(std::string_view doing);
  // Steps to completion, expecting no rows.
  absl::Status Run(std::string_view doing);
  // Steps to completion, calling `row` for each row; resets when done.
  absl::Status ForEachRow(std::string_view doing, const std::function<void(const Statement&)>& row);

  // A name the statement does not return is a bug in the SQL beside the
  // reader: it aborts, naming the column and the SQL.
  int64_t Int(std::string_view column) const { return IntAt(Index(column)); }
  double Double(std::string_view column) const { return DoubleAt(Index(column)); }
  std::string Text(std::string_view column) const { return TextAt(Index(column)); }
  std::vector<uint8_t> Blob(std::string_view column) const { return BlobAt(Index(column)); }
  bool IsNull(std::string_view column) const { return IsNullAt(Index(column)); }
  // By place (0 = the first column selected), for a reader run once a row
  // on a hot path, its SELECT beside it: nothing checks that the place
  // holds the column meant, so its tests must read back known figures.
  int64_t IntAt(int index) const;
  double DoubleAt(int index) const;
  // A blob's bytes, valid until the statement steps or resets (no copy).
  std::span<const uint8_t> BlobBytesAt(int index) const;

 private:
  int Index(std::string_view column) const;
  std::string TextAt(int index) const;
  std::vector<uint8_t> BlobAt(int index) const;
  bool IsNullAt(int index) const;

  sqlite3_stmt* stmt_;
  const Connection* conn_;
  // Column names by index, filled at the first read (a statement's columns
  // never change once prepared).
  mutable std::vector<std::string> columns_;
  mutable size_t next_ = 0;  // where the next read's column probably is
};

}  // namespace crest::store::internal
