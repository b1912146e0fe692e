// Test support: a SQLite VFS that behaves like a read-only file system.
// Existing files open read-only; new files cannot be created.
#pragma once

namespace crest::testing {

// Registers (once) and returns the VFS name to pass as StoreOptions::vfs.
const char* ReadOnlyVfsName();

}  // namespace crest::testing
