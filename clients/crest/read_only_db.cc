#include "read_only_db.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>

#include "absl/strings/str_replace.h"
#include "crest/common/str_cat.h"
#include "crest/store/store.h"

namespace crest::cli {
namespace {

// The decompressed copies this process made, removed when it exits.
struct Copies {
  std::mutex mu;
  std::map<std::string, std::string> of;  // .gz path -> its copy
  std::filesystem::path dir;
  ~Copies() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

Copies& TheCopies() {
  static Copies copies;
  return copies;
}

// A private folder under $TMPDIR (or /tmp) for this process's copies.
absl::StatusOr<std::filesystem::path> CopyDir(Copies& copies) {
  if (!copies.dir.empty()) return copies.dir;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = StrCat(tmp != nullptr && *tmp != 0 ? tmp : "/tmp", "/crest-gz-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("cannot make a folder for the decompressed database under ", pattern));
  }
  copies.dir = pattern;
  return copies.dir;
}

// Decompresses `gz` into `out`; FailedPrecondition names what went wrong.
absl::Status Gunzip(const std::string& gz, const std::filesystem::path& out) {
  gzFile in = gzopen(gz.c_str(), "rb");
  if (in == nullptr) return absl::FailedPreconditionError(StrCat(gz, ": cannot be read"));
  std::FILE* to = std::fopen(out.c_str(), "wb");
  if (to == nullptr) {
    gzclose(in);
    return absl::FailedPreconditionError(StrCat("cannot write ", out.string()));
  }
  char buf[1 << 16];
  int n = 0;
  bool wrote = true;
  while ((n = gzread(in, buf, sizeof buf)) > 0) {
    wrote = wrote && std::fwrite(buf, 1, static_cast<size_t>(n), to) == static_cast<size_t>(n);
  }
  // A truncated file reads to its end without n < 0: gzerror says so.
  int error = Z_OK;
  const std::string message = gzerror(in, &error);
  gzclose(in);
  wrote = std::fclose(to) == 0 && wrote;
  if (n < 0 || (error != Z_OK && error != Z_STREAM_END)) {
    return absl::FailedPreconditionError(StrCat(gz, ": not a whole gzip file (", message, ")"));
  }
  if (!wrote) return absl::FailedPreconditionError(StrCat("cannot write ", out.string()));
  return absl::OkStatus();
}

// The decompressed copy of `gz` this process reads (made once).
absl::StatusOr<std::string> Decompressed(const std::string& gz) {
  Copies& copies = TheCopies();
  const std::lock_guard lock(copies.mu);
  if (auto it = copies.of.find(gz); it != copies.of.end()) return it->second;
  auto dir = CopyDir(copies);
  if (!dir.ok()) return dir.status();
  const std::filesystem::path out = *dir / StrCat(copies.of.size(), ".db");
  if (auto s = Gunzip(gz, out); !s.ok()) return s;
  return copies.of[gz] = out.string();
}

}  // namespace

absl::StatusOr<std::unique_ptr<store::Store>> OpenExisting(const std::string& path,
                                                           bool read_only) {
  store::StoreOptions options;
  options.read_only = read_only;
  options.create = false;
  std::string file = path;
  if (path.ends_with(".gz")) {
    if (!read_only) {
      return absl::FailedPreconditionError(
          StrCat(path, ": a gzip-compressed database opens read-only; gunzip it to change it"));
    }
    std::error_code missing;
    if (!std::filesystem::exists(path, missing)) {
      return absl::FailedPreconditionError(StrCat(path, ": no such database"));
    }
    auto copy = Decompressed(path);
    if (!copy.ok()) return copy.status();
    file = *copy;
  }
  auto db = store::Store::Open(file, options);
  if (db.ok()) return db;
  // The user's path, not the copy's, in the message.
  const std::string message = absl::StrReplaceAll(db.status().message(), {{file, path}});
  // The store says NotFound; for the CLI a missing database is a database
  // problem (exit 1), not bad input.
  if (absl::IsNotFound(db.status())) return absl::FailedPreconditionError(message);
  return absl::Status(db.status().code(), message);
}

}  // namespace crest::cli
