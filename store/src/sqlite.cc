#include "sqlite.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "crest/common/str_cat.h"

namespace crest::store::internal {

absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view path, std::string_view doing) {
  const int primary = rc & 0xff;
  const char* detail =
      (db != nullptr && sqlite3_errcode(db) == rc) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message = StrCat(path, ": ", doing, ": ", detail);
  switch (primary) {
    case SQLITE_NOTADB:
      return absl::FailedPreconditionError(
          StrCat(path, ": not a Crest database (", detail, ") while ", doing));
    case SQLITE_CORRUPT:
      return absl::DataLossError(StrCat(path, ": database is corrupt (", detail, ") while ", doing,
                                        "; run `crest db check`"));
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(StrCat(path, ": disk or database full while ", doing,
                                                 " (", detail,
                                                 "); nothing of this transaction was written"));
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return absl::PermissionDeniedError(
          StrCat(path, ": cannot write or open (", detail, ") while ", doing));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(StrCat(path, ": database busy (", detail, ") while ", doing));
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    default:
      return absl::InternalError(message);
  }
}

std::string FileUri(const std::string& path, std::string_view query) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return StrCat(out, "?", query);
}

namespace {

absl::StatusOr<sqlite3*> OpenHandle(const std::string& name, int flags, const char* vfs,
                                    const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &db, flags, vfs);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteStatus(rc, db, path, "opening");
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return db;
}

// True when a read-only handle cannot read `path` only because SQLite may
// not make the WAL's shared memory, and no write-ahead log exists.
bool NeedsImmutable(sqlite3* db, const std::string& path) {
  const int rc = sqlite3_exec(db, "PRAGMA schema_version", nullptr, nullptr, nullptr);
  const int primary = rc & 0xff;
  if (primary != SQLITE_READONLY && primary != SQLITE_CANTOPEN) return false;
  return access((path + "-wal").c_str(), F_OK) != 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path,
                                                             const Options& options) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  flags |= options.read_only ? SQLITE_OPEN_READONLY
                             : (SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0));
  auto db = OpenHandle(path, flags, options.vfs, path);
  if (!db.ok()) return db.status();
  if (options.read_only && NeedsImmutable(*db, path)) {
    sqlite3_close_v2(*db);
    db = OpenHandle(FileUri(path, "immutable=1"), flags, options.vfs, path);
    if (!db.ok()) return db.status();
  }
  std::unique_ptr<Connection> conn(new Connection(*db, path));
  sqlite3_busy_timeout(*db, options.busy_timeout_ms);
  if (auto s = conn->Exec("PRAGMA foreign_keys=ON", "enabling foreign keys"); !s.ok()) return s;
  return conn;
}

absl::Status Connection::Configure(const Options& options) {
  // 32 MiB of page cache per connection: a d_ff ranking touches a few
  // hundred pages; inserts into 10^6-row indexes need many more.
  if (auto s = Exec("PRAGMA cache_size=-32768", "sizing the page cache"); !s.ok()) return s;
  // Read through a memory map (up to 4 GiB of the file): a lookup then costs
  // no system call per page.
  if (options.memory_map) {
    if (auto s = Exec("PRAGMA mmap_size=4294967296", "mapping the file"); !s.ok()) return s;
  }
  if (options.read_only) return absl::OkStatus();
  // Two processes opening one new file at once can deadlock on the switch
  // (each holds a shared lock and wants the exclusive one); SQLite then
  // answers SQLITE_BUSY at once, without the busy handler. Retry it, within
  // the busy timeout.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busy_timeout_ms);
  for (;;) {
    const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) break;
    if (rc != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
      return Error(rc, "switching to WAL mode");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
              "setting durability");
}

Connection::Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Connection::~Connection() {
  cache_.clear();  // finalize statements before closing
  sqlite3_close_v2(db_);
}

absl::Status Connection::Error(int rc, std::string_view doing) const {
  return SqliteStatus(rc, db_, path_, doing);
}

absl::Status Connection::Exec(std::string_view sql, std::string_view doing) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? absl::OkStatus() : Error(rc, doing);
}

absl::StatusOr<Statement*> Connection::Prepare(const std::string& sql) {
  if (auto it = cache_.find(sql); it != cache_.end()) return &it->second->Reset();
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Error(rc, StrCat("preparing `", sql.substr(0, 60), "`"));
  auto owned = std::make_unique<Statement>(stmt, this);
  Statement* raw = owned.get();
  cache_.emplace(sql, std::move(owned));
  return raw;
}

absl::Status Connection::Begin(std::string_view doing) { return Exec("BEGIN IMMEDIATE", doing); }

absl::Status Connection::Commit(std::string_view doing) {
  auto commit = Prepare("COMMIT");
  if (!commit.ok()) return commit.status();
  return (*commit)->Run(doing);
}

absl::Status Connection::BeginRead(std::string_view doing) {
  auto begin = Prepare("BEGIN DEFERRED");
  if (!begin.ok()) return begin.status();
  return (*begin)->Run(doing);
}

void Connection::Rollback() {
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int Connection::Changes() const { return sqlite3_changes(db_); }

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindBlob(int index, const std::vector<uint8_t>& value) {
  sqlite3_bind_blob64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> Statement::Step(std::string_view doing) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status status = conn_->Error(rc, doing);
  sqlite3_reset(stmt_);
  return status;
}

absl::Status Statement::Run(std::string_view doing) {
  while (true) {
    auto row = Step(doing);
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

absl::Status Statement::ForEachRow(std::string_view doing,
                                   const std::function<void(const Statement&)>& row) {
  while (true) {
    auto ready = Step(doing);
    if (!ready.ok()) return ready.status();
    if (!*ready) break;
    row(*this);
  }
  sqlite3_reset(stmt_);
  return absl::OkStatus();
}

int Statement::Index(std::string_view column) const {
  if (columns_.empty()) {
    const int n = sqlite3_column_count(stmt_);
    for (int i = 0; i < n; ++i) columns_.emplace_back(sqlite3_column_name(stmt_, i));
  }
  // Readers read a row's columns in the same order every row: the column
  // after the last one read is tried first (profiled: hashing the name was a
  // tenth of a d_ff ranking's time).
  if (next_ < columns_.size() && columns_[next_] == column) return static_cast<int>(next_++);
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == column) {
      next_ = i + 1;
      return static_cast<int>(i);
    }
  }
  std::fprintf(stderr, "crest store: bug: no column '%.*s' in: %s\n",
               static_cast<int>(column.size()), column.data(), sqlite3_sql(stmt_));
  std::abort();
}

int64_t Statement::IntAt(int index) const { return sqlite3_column_int64(stmt_, index); }
double Statement::DoubleAt(int index) const { return sqlite3_column_double(stmt_, index); }
bool Statement::IsNullAt(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string Statement::TextAt(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::span<const uint8_t> Statement::BlobBytesAt(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, column));
  const auto size = static_cast<size_t>(sqlite3_column_bytes(stmt_, column));
  return data == nullptr ? std::span<const uint8_t>{} : std::span<const uint8_t>(data, size);
}

std::vector<uint8_t> Statement::BlobAt(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, column));
  const auto size = static_cast<size_t>(sqlite3_column_bytes(stmt_, column));
  return data == nullptr ? std::vector<uint8_t>{} : std::vector<uint8_t>(data, data + size);
}

}  // namespace crest::store::internal
