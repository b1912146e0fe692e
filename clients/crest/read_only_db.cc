#include "read_only_db.h"

#include <unistd.h>

#include "crest/common/str_cat.h"

namespace crest::cli {

absl::StatusOr<std::unique_ptr<store::Store>> OpenExisting(const std::string& path,
                                                           bool read_only) {
  if (!path.empty() && access(path.c_str(), F_OK) != 0) {
    return absl::FailedPreconditionError(StrCat(path, ": no such database file"));
  }
  store::StoreOptions options;
  options.read_only = read_only;
  options.create = false;
  return store::Store::Open(path, options);
}

}  // namespace crest::cli
