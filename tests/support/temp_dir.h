// Test support: a temporary directory removed with its contents at scope end,
// and whole-file reads for "the file was left as it was" checks.
#pragma once

#include <string>

namespace crest::testing {

class TempDir final {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::string& bytes);
// The same for a secret (a token file): readable and writable by its owner
// alone (0600), as crestd requires.
void WriteSecret(const std::string& path, const std::string& bytes);

}  // namespace crest::testing
