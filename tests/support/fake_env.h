// Test support: an Env that is the real machine's except where a test says
// otherwise — a fixed host name, a clock that stands still, or a path whose
// reads, writes or directory creation fail with a given error.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "crest/common/env.h"

namespace crest::testing {

class FakeEnv final : public Env {
 public:
  void SetHostName(std::string host) { host_ = std::move(host); }
  // The wall clock reads `seconds` (since the Unix epoch) until set again.
  void SetNow(double seconds) { now_ = seconds; }
  // Reads of, writes to or creating `path` fail with `error`.
  void FailReads(const std::string& path, absl::Status error);
  void FailWrites(const std::string& path, absl::Status error);
  void FailCreateDirectories(const std::string& path, absl::Status error);

  double NowSeconds() const override { return now_ ? *now_ : DefaultEnv().NowSeconds(); }
  double MonotonicSeconds() const override { return DefaultEnv().MonotonicSeconds(); }
  std::string HostName() const override { return host_ ? *host_ : DefaultEnv().HostName(); }
  std::optional<std::string> GetVar(const std::string& name) const override {
    return DefaultEnv().GetVar(name);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) const override;
  absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) override;
  absl::Status CreateDirectories(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& dir,
                                                     std::string_view suffix) const override {
    return DefaultEnv().ListFiles(dir, suffix);
  }
  absl::Status RemoveFile(const std::string& path) override {
    return DefaultEnv().RemoveFile(path);
  }
  absl::StatusOr<bool> Exists(const std::string& path) const override {
    return DefaultEnv().Exists(path);
  }

 private:
  std::optional<absl::Status> Fault(const std::map<std::string, absl::Status>& faults,
                                    const std::string& path) const;

  std::optional<std::string> host_;
  std::optional<double> now_;
  mutable std::mutex mutex_;
  std::map<std::string, absl::Status> read_faults_, write_faults_, mkdir_faults_;
};

}  // namespace crest::testing
