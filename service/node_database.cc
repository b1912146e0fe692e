#include "node_database.h"

#include "crest/common/str_cat.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "log.h"

namespace crest::service {

absl::Status OpenNodeDatabase(const std::string& path, Env* env, bool quick_check) {
  store::StoreOptions options;
  options.env = env;
  auto db = store::Store::Open(path, options);
  if (!db.ok()) return db.status();
  if (!quick_check) return absl::OkStatus();
  auto problems = store::QuickCheck(**db);
  if (!problems.ok()) return problems.status();
  if (!problems->empty()) {
    Log(Level::kError, "database_corrupt", {{"db", path}, {"first_problem", problems->front()}});
    return absl::DataLossError(StrCat(path, " failed its quick check (", problems->size(),
                                      " problems; first: ", problems->front(),
                                      "); restore it from a snapshot or `crest db check`"));
  }
  Log(Level::kInfo, "database_checked", {{"db", path}, {"result", "ok"}});
  return absl::OkStatus();
}

int64_t MaxDbPages(int64_t max_db_bytes) { return max_db_bytes / 4 * 3 / store::kPageBytes; }

}  // namespace crest::service
