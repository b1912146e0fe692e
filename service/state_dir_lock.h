// Internal to crestd: one crestd per state directory. Two daemons on one
// directory would both run its job queue (an audit saw a job end at
// 124,643/120,000 GEMMs). The lock is an flock on <state-dir>/crestd.lock,
// which holds the holder's pid and host; the kernel drops it when the holder
// exits, however it exits, so a crashed daemon never leaves a stale lock.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace crest::service {

class StateDirLock final {
 public:
  StateDirLock() = default;
  ~StateDirLock();
  StateDirLock(StateDirLock&& other) noexcept;
  StateDirLock& operator=(StateDirLock&& other) noexcept;

  // FailedPrecondition naming the holder ("pid 123 on node-7") when another
  // process holds the directory; another code when the file cannot be made.
  // `host` is this node's name, written for the next one to read.
  static absl::StatusOr<StateDirLock> Take(const std::string& state_dir, const std::string& host);

 private:
  explicit StateDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace crest::service
