#include "read_lock_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

namespace crest::testing {
namespace {

// The WAL-index's locks (wal.c): WRITE 0, CKPT 1, RECOVER 2, then the
// read marks' READ(0..4) at 3..7.
constexpr int kFirstReadLock = 3;
constexpr int kReadLocks = 5;

sqlite3_vfs g_read_lock_vfs;
sqlite3_vfs* g_read_lock_base = nullptr;
std::atomic<int64_t> g_read_locks{0};

// A file's methods as the base VFS gave them, but for xShmLock, which
// counts; the base's are found from the counted ones (the first member).
struct CountedMethods {
  sqlite3_io_methods methods;
  const sqlite3_io_methods* base;
};
std::mutex g_methods_mutex;
std::map<const sqlite3_io_methods*, std::unique_ptr<CountedMethods>> g_counted;  // by base

int CountingShmLock(sqlite3_file* file, int offset, int n, int flags) {
  const sqlite3_io_methods* base = reinterpret_cast<const CountedMethods*>(file->pMethods)->base;
  const int rc = base->xShmLock(file, offset, n, flags);
  const bool read_lock = offset >= kFirstReadLock && offset < kFirstReadLock + kReadLocks;
  if (rc == SQLITE_OK && read_lock && flags == (SQLITE_SHM_LOCK | SQLITE_SHM_SHARED)) {
    ++g_read_locks;
  }
  return rc;
}

const sqlite3_io_methods* Counted(const sqlite3_io_methods* base) {
  std::lock_guard<std::mutex> lock(g_methods_mutex);
  auto& counted = g_counted[base];
  if (!counted) {
    counted = std::make_unique<CountedMethods>(CountedMethods{*base, base});
    counted->methods.xShmLock = CountingShmLock;
  }
  return &counted->methods;
}

int CountingOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags,
                 int* out_flags) {
  const int rc = g_read_lock_base->xOpen(g_read_lock_base, name, file, flags, out_flags);
  // The WAL index belongs to the main database file's handle.
  if (rc == SQLITE_OK && (flags & SQLITE_OPEN_MAIN_DB) != 0 && file->pMethods != nullptr &&
      file->pMethods->iVersion >= 2 && file->pMethods->xShmLock != nullptr) {
    file->pMethods = Counted(file->pMethods);
  }
  return rc;
}

}  // namespace

const char* ReadLockCountingVfsName() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_read_lock_base = sqlite3_vfs_find(nullptr);
    g_read_lock_vfs = *g_read_lock_base;
    g_read_lock_vfs.zName = "crest-test-read-locks";
    g_read_lock_vfs.xOpen = CountingOpen;
    sqlite3_vfs_register(&g_read_lock_vfs, 0);
  });
  return g_read_lock_vfs.zName;
}

int64_t ReadLocksTaken() { return g_read_locks.load(); }

}  // namespace crest::testing
