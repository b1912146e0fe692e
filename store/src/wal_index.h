// Internal to the store: a cheap test for "has any connection, in any
// process, committed since I last looked?" on a database in WAL mode.
//
// SQLite keeps the WAL-index header in the "-shm" file next to the database
// (file format: https://www.sqlite.org/walformat.html, "The WAL-Index
// Format"): two 48-byte copies of a header holding, among others, iChange
// (incremented by every committed transaction), mxFrame (the last valid WAL
// frame) and the WAL salts (new at every WAL restart). A writer updates the
// second copy, then the first; readers trust the header only when both
// copies agree. Reading those 96 bytes with one pread costs no lock and no
// transaction, so a reader can skip a query whose answer only a commit can
// change.
//
// Use it from an open connection to the same database (SqliteStore does):
// in WAL mode that connection keeps its shared locks, so SQLite can neither
// delete the "-shm" file nor start it afresh while the mark is in use.
#pragma once

#include <array>
#include <optional>
#include <string>

namespace crest::store::internal {

class WalIndexMark {
 public:
  using Header = std::array<unsigned char, 48>;

  // Watches `db_path`-shm. nullopt when it cannot be opened (not in WAL mode,
  // or no connection has opened the database in WAL mode yet).
  static std::optional<WalIndexMark> Open(const std::string& db_path);
  WalIndexMark(WalIndexMark&& other) noexcept;
  WalIndexMark& operator=(WalIndexMark&&) = delete;
  WalIndexMark(const WalIndexMark&) = delete;
  ~WalIndexMark();

  // The current header when both copies agree and it is initialised; nullopt
  // while a writer is updating it or when it cannot be read (the caller then
  // asks SQLite). Two equal results mean no commit happened between them.
  std::optional<Header> Read() const;

 private:
  explicit WalIndexMark(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace crest::store::internal
