// Whole-file reads for small text inputs (specs, certificates, tokens).
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace crest {

// The file's bytes, or nullopt when it cannot be opened or read; callers
// word the error (which flag or field named the file).
inline std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

}  // namespace crest
