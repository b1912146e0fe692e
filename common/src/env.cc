#include "crest/common/env.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "crest/common/posix_error.h"

namespace crest {
namespace {

std::string Quoted(std::string_view verb, const std::string& path) {
  return std::string(verb) + " '" + path + "'";
}

// Writes all of `data` to `fd`; errno is kept on failure.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

class PosixEnv final : public Env {
 public:
  double NowSeconds() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  double MonotonicSeconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::string HostName() const override {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
    return buf;
  }
  std::optional<std::string> GetVar(const std::string& name) const override {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) const override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(errno, Quoted("cannot read", path));
    std::string out;
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        const int saved = errno;
        ::close(fd);
        return PosixError(saved, Quoted("cannot read", path));
      }
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) override {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(errno, Quoted("cannot write", tmp));
    if (!WriteAll(fd, contents) || ::fsync(fd) != 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return PosixError(saved, Quoted("cannot write", tmp));
    }
    if (::close(fd) != 0) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      return PosixError(saved, Quoted("cannot write", tmp));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      return PosixError(saved, Quoted("cannot replace", path));
    }
    return absl::OkStatus();
  }

  absl::Status CreateDirectories(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    return FromErrorCode(ec, Quoted("cannot create directory", path));
  }

  absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& dir,
                                                     std::string_view suffix) const override {
    std::error_code ec;
    std::vector<std::string> out;
    std::filesystem::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.ends_with(suffix)) continue;
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) out.push_back(it->path().string());
    }
    if (ec) return FromErrorCode(ec, Quoted("cannot list", dir));
    std::sort(out.begin(), out.end());
    return out;
  }

  absl::Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return PosixError(errno, Quoted("cannot remove", path));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Exists(const std::string& path) const override {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (ec) return FromErrorCode(ec, Quoted("cannot look at", path));
    return exists;
  }
};

}  // namespace

Env& DefaultEnv() {
  static Env* env = new PosixEnv();  // never destroyed: usable from any destructor
  return *env;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  return DefaultEnv().ReadFile(path);
}

}  // namespace crest
