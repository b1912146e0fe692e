#include "state_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"

namespace crest::service {
namespace {

std::string ReadHolder(int fd) {
  char buf[256] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "another process (it has not written its pid yet)" : holder;
}

}  // namespace

StateDirLock::~StateDirLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

StateDirLock::StateDirLock(StateDirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

StateDirLock& StateDirLock::operator=(StateDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

absl::StatusOr<StateDirLock> StateDirLock::Take(const std::string& state_dir,
                                                const std::string& host) {
  const std::string path = (std::filesystem::path(state_dir) / "crestd.lock").string();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(errno, StrCat("opening ", path));
  StateDirLock lock(fd);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return PosixError(errno, StrCat("locking ", path));
    return absl::FailedPreconditionError(
        StrCat("--state-dir ", state_dir, " is in use by another crestd (", ReadHolder(fd),
               "); stop it, or give this one its own --state-dir"));
  }
  const std::string holder = StrCat("pid ", getpid(), " on ", host, "\n");
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    return PosixError(errno, StrCat("writing ", path));
  }
  return lock;
}

}  // namespace crest::service
