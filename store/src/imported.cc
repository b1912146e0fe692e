// Timings imported from other tools: kept apart from the engine's measurements.
#include "crest/common/str_cat.h"
#include "imported_columns.h"
#include "key_columns.h"
#include "sqlite_store.h"

namespace crest::store::internal {

std::string ImportedColumnList() {
  return StrCat("uid, gpu_model, device, tool, source_file, source_hash, host, ", KeyColumnList(),
                ", time_us, created_us");
}

void BindImported(Statement& s, const std::string& uid, const std::string& host, int64_t created_us,
                  const ImportBatch& batch, const ImportedTiming& row) {
  s.Bind(1, uid)
      .Bind(2, batch.gpu_model)
      .Bind(3, batch.device)
      .Bind(4, batch.tool)
      .Bind(5, batch.source_file)
      .Bind(6, batch.source_hash)
      .Bind(7, host);
  BindKey(s, 8, row.key);
  s.Bind(15, row.time_us).Bind(16, created_us);
}

absl::StatusOr<int64_t> SqliteStore::InsertImported(const ImportBatch& batch) {
  int64_t added = 0;
  absl::Status status = InTransaction("importing timings", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(StrCat("INSERT INTO imported(", ImportedColumnList(),
                                      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                      "?12, ?13, ?14, ?15, ?16) ON CONFLICT DO NOTHING"));
    if (!stmt.ok()) return stmt.status();
    const int64_t now = NowUs();
    for (const ImportedTiming& row : batch.rows) {
      Statement& s = (*stmt)->Reset();
      BindImported(s, NewUid(), options_.host, now, batch, row);
      if (auto st = s.Run("importing a timing"); !st.ok()) return st;
      added += conn_->Changes();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return added;
}

absl::StatusOr<std::vector<Store::ImportedRow>> SqliteStore::ImportedTimings(
    const std::string& gpu_model) {
  auto stmt = conn_->Prepare(StrCat("SELECT ", KeyColumnList(),
                                    ", time_us, device, tool, source_file FROM imported WHERE "
                                    "gpu_model = ?1 ORDER BY id"));
  if (!stmt.ok()) return stmt.status();
  std::vector<ImportedRow> out;
  auto s =
      (*stmt)->Bind(1, gpu_model).ForEachRow("reading imported timings", [&](const Statement& row) {
        out.push_back({{ReadKey(row), row.Double("time_us")},
                       row.Text("device"),
                       row.Text("tool"),
                       row.Text("source_file")});
      });
  if (!s.ok()) return s;
  return out;
}

}  // namespace crest::store::internal
