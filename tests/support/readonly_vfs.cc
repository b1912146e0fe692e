#include "readonly_vfs.h"

#include <sqlite3.h>

#include <mutex>

namespace crest::testing {
namespace {

sqlite3_vfs g_vfs;
sqlite3_vfs* g_base = nullptr;

int ReadOnlyOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags,
                 int* out_flags) {
  if ((flags & SQLITE_OPEN_CREATE) != 0 || (flags & SQLITE_OPEN_READWRITE) != 0) {
    flags &= ~(SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE);
    flags |= SQLITE_OPEN_READONLY;
  }
  return g_base->xOpen(g_base, name, file, flags, out_flags);
}

int ReadOnlyAccess(sqlite3_vfs*, const char* name, int flags, int* result) {
  const int rc = g_base->xAccess(g_base, name, flags, result);
  if (rc == SQLITE_OK && flags == SQLITE_ACCESS_READWRITE) *result = 0;
  return rc;
}

int ReadOnlyDelete(sqlite3_vfs*, const char*, int) { return SQLITE_IOERR_DELETE; }

}  // namespace

const char* ReadOnlyVfsName() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_base = sqlite3_vfs_find(nullptr);
    g_vfs = *g_base;
    g_vfs.zName = "crest-test-readonly";
    g_vfs.xOpen = ReadOnlyOpen;
    g_vfs.xAccess = ReadOnlyAccess;
    g_vfs.xDelete = ReadOnlyDelete;
    sqlite3_vfs_register(&g_vfs, 0);
  });
  return g_vfs.zName;
}

}  // namespace crest::testing
