#include "crest/store/store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "crest/common/name_table.h"
#include "crest/common/str_cat.h"
#include "crest/store/schema_version.h"
#include "schema.h"
#include "sqlite_store.h"

namespace crest::store {

GemmKey GemmKey::Of(const tuner::GemmShape& g) {
  return {g.dtype, g.a_transposed, g.b_transposed, g.m, g.n, g.k, g.batch};
}

tuner::GemmShape GemmKey::Shape() const {
  tuner::GemmShape g;
  g.dtype = dtype;
  g.a_transposed = a_transposed;
  g.b_transposed = b_transposed;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  return g;
}

namespace {

constexpr NameTable<JobState, 5> kJobStates = {{{JobState::kQueued, "queued"},
                                                {JobState::kRunning, "running"},
                                                {JobState::kDone, "done"},
                                                {JobState::kFailed, "failed"},
                                                {JobState::kCancelled, "cancelled"}}};

}  // namespace

std::string_view JobStateName(JobState state) { return NameOf(kJobStates, state); }

std::optional<JobState> ParseJobState(std::string_view text) {
  return ValueNamed(kJobStates, text);
}

absl::StatusOr<std::vector<std::optional<RunBest>>> Store::RunBestsOf(
    const std::string& gpu_model, const RunKey& run, std::span<const GemmKey> keys,
    const tuner::MeasureMode& mode, tuner::AlgoChoice algo) {
  std::vector<std::optional<RunBest>> out;
  auto read = ForEachRunBests(gpu_model, {&run, 1}, keys, mode, algo,
                              [&out](size_t, std::span<const RunBest* const> bests) {
                                out.reserve(bests.size());
                                for (const RunBest* b : bests) {
                                  out.push_back(b ? std::optional(*b) : std::nullopt);
                                }
                                return false;
                              });
  if (!read.ok()) return read;
  return out;
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   const StoreOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("db: no database path given");
  if ((options.read_only || !options.create) && access(path.c_str(), F_OK) != 0) {
    return absl::NotFoundError(StrCat(path, ": no such database file"));
  }
  internal::Connection::Options conn_options;
  conn_options.read_only = options.read_only;
  conn_options.create = options.create;
  conn_options.busy_timeout_ms = options.busy_timeout_ms;
  conn_options.synchronous_full = options.synchronous_full;
  conn_options.vfs = options.vfs;
  conn_options.memory_map = options.memory_map;
  auto conn = internal::Connection::Open(path, conn_options);
  if (!conn.ok()) return conn.status();
  auto version = internal::CheckOwnership(**conn);
  if (!version.ok()) return version.status();
  if (auto s = (*conn)->Configure(conn_options); !s.ok()) {
    return s;
  }
  if (options.max_pages > 0) {
    // The write-ahead log is on disk too: it is checkpointed, and cut back,
    // once it holds a third of the pages the file may (a quarter of the two).
    const int64_t wal_pages = std::max<int64_t>(16, options.max_pages / 3);
    if (auto s = (*conn)->Exec(StrCat("PRAGMA max_page_count=", options.max_pages,
                                      "; PRAGMA wal_autocheckpoint=", wal_pages,
                                      "; PRAGMA journal_size_limit=", wal_pages * kPageBytes),
                               "capping the file size");
        !s.ok()) {
      return s;
    }
  }
  const int target = options.migrate_to_for_test > 0 ? options.migrate_to_for_test : kSchemaVersion;
  if (auto s = internal::Migrate(**conn, options.read_only, *version, target); !s.ok()) return s;
  return std::unique_ptr<Store>(new internal::SqliteStore(*std::move(conn), options));
}

namespace internal {

SqliteStore::SqliteStore(std::unique_ptr<Connection> conn, StoreOptions options)
    : conn_(std::move(conn)), options_(std::move(options)), random_(std::random_device{}()) {
  if (options_.env == nullptr) options_.env = &DefaultEnv();
  if (options_.host.empty()) options_.host = options_.env->HostName();
}

std::string SqliteStore::NewUid() {
  // Time first, so new rows append to the uid index instead of landing at
  // random places in it; 64 random bits keep uids unique across nodes.
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(NowUs()),
                static_cast<unsigned long long>(random_()));
  return buf;
}

absl::Status SqliteStore::WriteAllowed() const {
  if (!options_.read_only) return absl::OkStatus();
  return absl::FailedPreconditionError(StrCat(path(), ": opened read-only"));
}

absl::Status SqliteStore::InTransaction(std::string_view doing,
                                        const std::function<absl::Status()>& body) {
  if (auto s = WriteAllowed(); !s.ok()) return s;
  if (read_depth_ > 0) {  // its rollback would end the snapshot
    return absl::FailedPreconditionError(
        StrCat(doing, ": a write inside a read snapshot (a bug in the caller)"));
  }
  if (auto s = conn_->Begin(doing); !s.ok()) return s;
  absl::Status status = body();
  if (status.ok()) status = conn_->Commit(doing);
  if (!status.ok()) conn_->Rollback();
  return status;
}

absl::Status SqliteStore::BeginRead() {
  if (read_depth_++ > 0 || conn_->InTransaction()) return absl::OkStatus();
  if (auto s = conn_->BeginRead("beginning a read snapshot"); !s.ok()) {
    --read_depth_;
    return s;
  }
  read_begun_ = true;
  return absl::OkStatus();
}

void SqliteStore::EndRead() {
  if (read_depth_ == 0 || --read_depth_ > 0 || !read_begun_) return;
  read_begun_ = false;
  // SQLite has ended it itself when a read failed for want of memory or
  // disk (it rolls the transaction back).
  if (!conn_->InTransaction()) return;
  if (!conn_->Commit("ending a read snapshot").ok()) conn_->Rollback();
}

absl::Status SqliteStore::CountProgress(std::optional<int64_t> job_id, int64_t count) {
  if (!job_id) return absl::OkStatus();
  auto stmt = conn_->Prepare("UPDATE jobs SET done = done + ?1 WHERE id = ?2");
  if (!stmt.ok()) return stmt.status();
  return (*stmt)->Bind(1, count).Bind(2, *job_id).Run("counting job progress");
}

}  // namespace internal
}  // namespace crest::store
