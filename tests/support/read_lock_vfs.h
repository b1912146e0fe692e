// Test support: a SQLite VFS that counts the read transactions begun on
// the files opened through it. In WAL mode each read transaction takes one
// of the WAL-index read locks, shared (SQLite's wal.c); this VFS counts
// those acquisitions, so a test can say how many snapshots a piece of work
// read from.
#pragma once

#include <cstdint>

namespace crest::testing {

// Registers (once) and returns the VFS name to pass as StoreOptions::vfs.
const char* ReadLockCountingVfsName();
// Read locks taken through that VFS since the process began, all files.
int64_t ReadLocksTaken();

}  // namespace crest::testing
