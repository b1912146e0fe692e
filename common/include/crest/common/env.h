// Env: the side effects Crest has outside its own memory — the clocks, the
// host's name, environment variables and the filesystem — behind one
// interface, so code that needs them takes an Env& and tests substitute a
// fake (a fixed clock, another host name, a file that cannot be written).
//
// Every filesystem call returns a status whose message names the path and
// the system's error (crest/common/posix_error.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace crest {

class Env {
 public:
  virtual ~Env() = default;

  // Wall-clock time, seconds since the Unix epoch (timestamps in the store).
  virtual double NowSeconds() const = 0;
  // A monotonic clock in seconds, for durations and deadlines.
  virtual double MonotonicSeconds() const = 0;

  // This machine's name; "unknown" when the system will not say.
  virtual std::string HostName() const = 0;
  // An environment variable; nullopt when unset.
  virtual std::optional<std::string> GetVar(const std::string& name) const = 0;

  // The file's bytes. NotFound, PermissionDenied, … naming the path and errno.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) const = 0;
  // Writes `contents` to a temporary beside `path` and renames it over `path`,
  // so a reader sees the old file or the new one, never a part.
  virtual absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) = 0;
  // Creates `path` and its parents; OK when it already is a directory.
  virtual absl::Status CreateDirectories(const std::string& path) = 0;
  // The paths of the regular files in `dir` whose names end with `suffix`,
  // sorted. NotFound when `dir` does not exist.
  virtual absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& dir,
                                                             std::string_view suffix) const = 0;
  // Removes a file; OK when there was none.
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Whether anything exists at `path`; an error when that cannot be told.
  virtual absl::StatusOr<bool> Exists(const std::string& path) const = 0;
};

// The real machine's Env (POSIX and <filesystem>). Thread-safe; never destroyed.
Env& DefaultEnv();

// DefaultEnv().ReadFile(path): for code with no Env of its own to hand.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace crest
