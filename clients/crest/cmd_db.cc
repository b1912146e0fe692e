// `crest db export|merge|check|stats|import`: fleet files, and timings from
// other tools.
#include <memory>
#include <vector>

#include "cli.h"
#include "crest/common/str_cat.h"
#include "crest/remote/snapshot.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "crest/store/timing_csv.h"
#include "db_reports.h"
#include "printer.h"
#include "read_only_db.h"
#include "remote.h"
#include "table.h"

namespace crest::cli {
namespace {

struct DbFlags {
  std::string db;
  std::string out;
  std::string into;
  std::vector<std::string> snapshots;
  bool upgrade = false;
  std::string csv;  // import
  store::TimingCsvOptions csv_options;
};

absl::Status RunExport(const DbFlags& f, Io& io) {
  std::string from = f.db;
  if (!Remote().server.empty()) {
    if (!f.db.empty()) return absl::InvalidArgumentError("db: give --db or --server, not both");
    auto connection = DaemonChannel::Open(Remote());
    if (!connection.ok()) return connection.status();
    auto bytes = remote::DownloadSnapshot(*connection, f.out);
    if (!bytes.ok()) return bytes.status();
    from = StrCat("crestd at ", Remote().server, " (", Grouped(*bytes), " bytes)");
  } else {
    if (f.db.empty()) return absl::InvalidArgumentError("db: give --db FILE or --server HOST:PORT");
    auto db = OpenExisting(f.db, /*read_only=*/true);
    if (!db.ok()) return db.status();
    if (auto s = store::ExportTo(**db, f.out); !s.ok()) return s;
  }
  PrinterFor(io)->Print(DbExportReport{from, f.out});
  return absl::OkStatus();
}

absl::Status RunMerge(const DbFlags& f, Io& io) {
  store::StoreOptions options;
  auto db = store::Store::Open(f.into, options);
  if (!db.ok()) return db.status();
  DbMergeReport report{f.into, {}};
  for (const auto& snapshot : f.snapshots) {
    auto r = store::MergeFrom(**db, snapshot);
    if (!r.ok()) return r.status();
    report.merged.emplace_back(snapshot, *r);
  }
  PrinterFor(io)->Print(report);
  return absl::OkStatus();
}

absl::Status RunCheck(const DbFlags& f, Io& io) {
  auto db = OpenExisting(f.db, /*read_only=*/!f.upgrade);
  if (!db.ok()) return db.status();
  auto r = store::Check(**db);
  if (!r.ok()) return r.status();
  PrinterFor(io)->Print(DbCheckReport{f.db, *r});
  if (!r->ok) return absl::DataLossError(StrCat(f.db, ": check failed"));
  return absl::OkStatus();
}

absl::Status RunStats(const DbFlags& f, Io& io) {
  auto db = OpenExisting(f.db, /*read_only=*/true);
  if (!db.ok()) return db.status();
  auto s = store::Stats(**db);
  if (!s.ok()) return s.status();
  PrinterFor(io)->Print(DbStatsReport{f.db, *s});
  return absl::OkStatus();
}

absl::Status RunImport(const DbFlags& f, Io& io) {
  auto batch = store::ReadTimingCsv(f.csv, f.csv_options);
  if (!batch.ok()) return batch.status();
  store::StoreOptions options;
  auto db = store::Store::Open(f.db, options);
  if (!db.ok()) return db.status();
  auto added = store::Import(**db, *batch);
  if (!added.ok()) return added.status();
  PrinterFor(io)->Print(DbImportReport{f.db, f.csv, batch->gpu_model, batch->device, batch->tool,
                                       static_cast<int64_t>(batch->rows.size()), *added});
  return absl::OkStatus();
}

}  // namespace

Command RegisterDb(CLI::App& root) {
  auto flags = std::make_shared<DbFlags>();
  auto which = std::make_shared<std::string>();
  Command cmd;
  cmd.app = AddCommand(root, "db", "Database files: export, merge, check, stats, import");
  RequireCommand(*cmd.app);
  CLI::App* exp =
      AddCommand(*cmd.app, "export", "Write a consistent snapshot (safe while a sweep writes)");
  AddOption(*exp, "--db", flags->db, "database to export (or --server: a crestd's)");
  AddOption(*exp, "--out", flags->out, "snapshot file to create (must not exist)").Required();
  CLI::App* merge = AddCommand(
      *cmd.app, "merge", "Merge snapshots into a database (idempotent; each row keeps its host)");
  AddOption(*merge, "--into", flags->into, "database to merge into (created if missing)")
      .Required();
  AddOption(*merge, "snapshots", flags->snapshots, "snapshot files").Required();
  CLI::App* check =
      AddCommand(*cmd.app, "check", "Check integrity and schema; exits 1 when either is wrong");
  AddOption(*check, "--db", flags->db, "database to check").Required();
  AddFlag(*check, "--upgrade", flags->upgrade, "upgrade an older schema first (writes the file)");
  CLI::App* stats = AddCommand(*cmd.app, "stats", "Count what a database holds");
  AddOption(*stats, "--db", flags->db, "database").Required();
  CLI::App* import = AddCommand(
      *cmd.app, "import",
      "Import GEMM timings another tool made (CSV: m, n, k, dtype, [batch], [layout], time_us "
      "or median_us, [device], [tool]); stored as imported, never as Crest's measurements");
  AddOption(*import, "--db", flags->db, "database (created if missing)").Required();
  AddOption(*import, "--csv", flags->csv, "the CSV file").Required();
  AddOption(*import, "--device", flags->csv_options.device,
            "the GPU the times were taken on, as the driver names it (when the file "
            "has no device column)");
  AddOption(*import, "--tool", flags->csv_options.tool,
            "the tool and how it timed, e.g. \"torch.matmul, median of 20\" (when the "
            "file has no tool or note column)");
  AddOption(*import, "--time-column", flags->csv_options.time_column,
            "the column of times in µs (default: time_us, else median_us)");
  cmd.run = [flags, exp, merge, check, stats, import](Io& io) -> absl::Status {
    if (Parsed(*exp)) return RunExport(*flags, io);
    if (Parsed(*merge)) return RunMerge(*flags, io);
    if (Parsed(*check)) return RunCheck(*flags, io);
    if (Parsed(*stats)) return RunStats(*flags, io);
    if (Parsed(*import)) return RunImport(*flags, io);
    return absl::InvalidArgumentError("db: give export, merge, check, stats or import");
  };
  return cmd;
}

}  // namespace crest::cli
