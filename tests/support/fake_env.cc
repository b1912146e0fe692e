#include "fake_env.h"

namespace crest::testing {

void FakeEnv::FailReads(const std::string& path, absl::Status error) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_faults_[path] = std::move(error);
}

void FakeEnv::FailWrites(const std::string& path, absl::Status error) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_faults_[path] = std::move(error);
}

void FakeEnv::FailCreateDirectories(const std::string& path, absl::Status error) {
  std::lock_guard<std::mutex> lock(mutex_);
  mkdir_faults_[path] = std::move(error);
}

std::optional<absl::Status> FakeEnv::Fault(const std::map<std::string, absl::Status>& faults,
                                           const std::string& path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = faults.find(path);
  if (it == faults.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::string> FakeEnv::ReadFile(const std::string& path) const {
  if (auto fault = Fault(read_faults_, path)) return *fault;
  return DefaultEnv().ReadFile(path);
}

absl::Status FakeEnv::WriteFileAtomically(const std::string& path, std::string_view contents) {
  if (auto fault = Fault(write_faults_, path)) return *fault;
  return DefaultEnv().WriteFileAtomically(path, contents);
}

absl::Status FakeEnv::CreateDirectories(const std::string& path) {
  if (auto fault = Fault(mkdir_faults_, path)) return *fault;
  return DefaultEnv().CreateDirectories(path);
}

}  // namespace crest::testing
