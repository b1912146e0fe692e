// Fleet files: export a snapshot, merge snapshots, check and describe a file.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

#include "crest/common/str_cat.h"
#include "crest/store/schema_version.h"
#include "device_columns.h"
#include "imported_columns.h"
#include "job_columns.h"
#include "key_columns.h"
#include "measurement_columns.h"
#include "prediction_columns.h"
#include "race_columns.h"
#include "run_packs.h"
#include "schema.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

// The column named `column` of the first row of `sql`; 0 when there is none.
absl::StatusOr<int64_t> QueryInt(Connection& conn, const std::string& sql, std::string_view doing,
                                 const char* column = "value") {
  auto stmt = conn.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  auto row = (*stmt)->Step(doing);
  if (!row.ok()) return row.status();
  const int64_t value = *row ? (*stmt)->Int(column) : 0;
  (*stmt)->Reset();
  return value;
}

}  // namespace

absl::Status SqliteStore::ExportTo(const std::string& out_path) {
  if (access(out_path.c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(
        StrCat(out_path, ": already exists; choose a new snapshot path"));
  }
  auto stmt = conn_->Prepare("VACUUM INTO ?1");
  if (!stmt.ok()) return stmt.status();
  absl::Status status = (*stmt)->Bind(1, out_path).Run(StrCat("exporting to ", out_path));
  if (!status.ok()) std::remove(out_path.c_str());
  return status;
}

namespace {

// Devices are matched by (uuid, host); every column but the id is copied.
std::string MergeDevicesSql() {
  const std::string columns = DeviceColumnList();
  return StrCat("INSERT INTO main.devices(", columns, ") SELECT ", columns,
                " FROM src.devices WHERE true ON CONFLICT(uuid, host) DO NOTHING");
}
constexpr const char* kMergeSoftware =
    "INSERT INTO main.software(driver, cuda_runtime, cublaslt) "
    "SELECT driver, cuda_runtime, cublaslt FROM src.software WHERE true "
    "ON CONFLICT DO NOTHING";
// Jobs keep their uid; every column but the id is copied (job_columns.h).
std::string MergeJobsSql() {
  const std::string columns = JobColumnList(/*with_id=*/false);
  return StrCat("INSERT INTO main.jobs(", columns, ") SELECT ", columns,
                " FROM src.jobs WHERE true ON CONFLICT(uid) DO NOTHING");
}

// The joins that map a snapshot row's (aliased `row`) job to this
// database's id by the job's uid: mj.id, NULL outside a job.
std::string RemappedJob(std::string_view row) {
  return StrCat("LEFT JOIN src.jobs AS sj ON sj.id = ", row,
                ".job_id LEFT JOIN main.jobs AS mj ON mj.uid = sj.uid");
}

// The joins that map a snapshot row's run (its device, software and job) to
// this database's ids through their natural keys: md.id, ms.id, mj.id.
std::string RemappedRun(std::string_view row) {
  return StrCat("JOIN src.devices AS sd ON sd.id = ", row,
                ".device_id JOIN main.devices AS md ON md.uuid = sd.uuid AND md.host = sd.host "
                "JOIN src.software AS ss ON ss.id = ",
                row,
                ".software_id JOIN main.software AS ms ON ms.driver = ss.driver AND "
                "ms.cuda_runtime = ss.cuda_runtime AND ms.cublaslt = ss.cublaslt ",
                RemappedJob(row));
}

// Measurements keep their uid; device, software and job ids are remapped
// through the rows' natural keys.
std::string MergeMeasurementsSql() {
  return StrCat("INSERT INTO main.measurements(job_id, device_id, software_id, uid, gpu_model, ",
                KeyColumnList(), ", ", MeasurementColumnList(""),
                ") SELECT mj.id, md.id, ms.id, sm.uid, sm.gpu_model, ", KeyColumnList("sm."), ", ",
                MeasurementColumnList("sm."), " FROM src.measurements AS sm ", RemappedRun("sm"),
                " WHERE true ON CONFLICT(uid) DO NOTHING");
}

std::string MergeImportedSql() {
  const std::string columns = ImportedColumnList();
  return StrCat("INSERT INTO main.imported(", columns, ") SELECT ", columns,
                " FROM src.imported WHERE true ON CONFLICT DO NOTHING");
}

std::string MergePredictionsSql() {
  return StrCat("INSERT INTO main.predictions(job_id, ", PredictionColumnList(), ") SELECT mj.id, ",
                PredictionColumnList("sp."), " FROM src.predictions AS sp ", RemappedJob("sp"),
                " WHERE true ON CONFLICT DO NOTHING");
}

// Races keep their uid and are remapped like measurements; their standings
// and timings follow their race by uid.
std::string MergeRacesSql() {
  return StrCat("INSERT INTO main.races(uid, job_id, device_id, software_id, ", RaceColumnList(),
                ") SELECT sr.uid, mj.id, md.id, ms.id, ", RaceColumnList("sr."),
                " FROM src.races AS sr ", RemappedRun("sr"),
                " WHERE true ON CONFLICT(uid) DO NOTHING");
}
std::string MergeRaceEntriesSql() {
  return StrCat("INSERT INTO main.race_entries(race_id, ", RaceEntryColumnList(),
                ") SELECT mr.id, ", RaceEntryColumnList("se."),
                " FROM src.race_entries AS se "
                "JOIN src.races AS sr ON sr.id = se.race_id JOIN main.races AS mr ON mr.uid = "
                "sr.uid WHERE true ON CONFLICT DO NOTHING");
}
constexpr const char* kMergeRaceTimes =
    "INSERT INTO main.race_times(race_id, round, candidate, time_us) "
    "SELECT mr.id, st.round, st.candidate, st.time_us FROM src.race_times AS st "
    "JOIN src.races AS sr ON sr.id = st.race_id JOIN main.races AS mr ON mr.uid = sr.uid "
    "WHERE true ON CONFLICT DO NOTHING";

// The attached snapshot must be a Crest database of this schema version.
absl::Status CheckSnapshotSchema(Connection& conn, const std::string& snapshot) {
  // The snapshot's own version: `src.pragma_user_version` would read main's.
  auto version =
      QueryInt(conn, "PRAGMA src.user_version", "reading the snapshot's schema", "user_version");
  if (!version.ok()) {
    return absl::FailedPreconditionError(
        StrCat(snapshot, ": not a Crest database (", version.status().message(), ")"));
  }
  if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        StrCat(snapshot, ": newer schema version ", *version, " than this crest's (",
               kSchemaVersion, "); merge it with a newer crest. Nothing was merged"));
  }
  if (*version != kSchemaVersion) {
    return absl::FailedPreconditionError(StrCat(snapshot, ": schema version ", *version,
                                                " differs from this crest's (", kSchemaVersion,
                                                "); open it with this crest's `db check --upgrade` "
                                                "first, or use a crest of that version"));
  }
  return absl::OkStatus();
}

// Replayed and measured runs of one GPU model never share a database
// (SqliteStore::RefuseMixedKinds): nor does a merge bring them together.
absl::Status CheckSnapshotKinds(Connection& conn, const std::string& snapshot) {
  auto mixed = QueryInt(conn,
                        "SELECT count(*) AS value FROM src.devices AS sd JOIN main.devices AS md "
                        "ON md.gpu_model = sd.gpu_model AND (md.replay = '') != (sd.replay = '')",
                        StrCat("reading ", snapshot, "'s devices"));
  if (!mixed.ok()) return mixed.status();
  if (*mixed == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(StrCat(
      snapshot,
      ": holds replayed runs of a GPU model this database holds measured runs of (or "
      "the reverse); the two kinds are kept in databases of their own, so that no answer pools "
      "them"));
}

// An error met opening or reading the snapshot, said of the snapshot: SQLite
// reports it under the connection's main file (`main_path`), which is fine.
absl::Status OfSnapshot(const absl::Status& status, std::string_view main_path,
                        const std::string& snapshot) {
  std::string_view message(status.message().data(), status.message().size());
  const std::string prefix = StrCat(main_path, ": ");
  if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  return absl::Status(status.code(),
                      StrCat(snapshot, ": ", message, "; nothing was merged into ", main_path));
}

// SQLite's quick check of one attached schema ("main" or "src"): empty when
// its pages and b-trees are sound.
absl::StatusOr<std::vector<std::string>> QuickCheckOf(Connection& conn, std::string_view schema) {
  auto stmt = conn.Prepare(StrCat("PRAGMA ", schema, ".quick_check"));
  if (!stmt.ok()) return stmt.status();
  std::vector<std::string> problems;
  for (;;) {
    auto row = (*stmt)->Step(
        StrCat("checking the pages of ", schema == "src" ? "the snapshot" : "the database"));
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::string line = (*stmt)->Text("quick_check");
    if (line != "ok") problems.push_back(std::move(line));
  }
  return problems;
}

// Refuses a snapshot whose pages are corrupt before anything is merged, so
// the error names it and the target is left as it was.
absl::Status CheckSnapshotPages(Connection& conn, const std::string& snapshot) {
  auto problems = QuickCheckOf(conn, "src");
  if (!problems.ok()) return OfSnapshot(problems.status(), conn.path(), snapshot);
  if (problems->empty()) return absl::OkStatus();
  return absl::DataLossError(
      StrCat(snapshot, ": snapshot is corrupt (", problems->front(),
             problems->size() > 1 ? StrCat(", and ", problems->size() - 1, " more problems")
                                  : std::string(),
             "); nothing was merged into ", conn.path(), "; export the node's database again"));
}

// A merge that failed on corrupt data: which of the two files is at fault.
absl::Status BlameCorruption(Connection& conn, const absl::Status& status,
                             const std::string& snapshot) {
  if (status.code() != absl::StatusCode::kDataLoss) return status;
  auto target = QuickCheckOf(conn, "main");
  if (target.ok() && target->empty()) return OfSnapshot(status, conn.path(), snapshot);
  return status;  // the target itself: its path leads the message
}

}  // namespace

absl::StatusOr<MergeReport> SqliteStore::MergeFrom(const std::string& snapshot) {
  if (auto s = WriteAllowed(); !s.ok()) return s;
  if (access(snapshot.c_str(), R_OK) != 0) {
    return absl::NotFoundError(StrCat(snapshot, ": no such snapshot file (or not readable)"));
  }
  auto attach = conn_->Prepare("ATTACH DATABASE ?1 AS src");
  if (!attach.ok()) return attach.status();
  if (auto s = (*attach)->Bind(1, FileUri(snapshot, "mode=ro")).Run("opening the snapshot");
      !s.ok()) {
    return OfSnapshot(s, path(), snapshot);
  }
  struct Detach {
    Connection* conn;
    ~Detach() { conn->Exec("DETACH DATABASE src", "closing the snapshot").IgnoreError(); }
  } detach{conn_.get()};
  if (auto s = CheckSnapshotSchema(*conn_, snapshot); !s.ok()) return s;
  if (auto s = CheckSnapshotPages(*conn_, snapshot); !s.ok()) return s;
  if (auto s = CheckSnapshotKinds(*conn_, snapshot); !s.ok()) return s;

  MergeReport report;
  absl::Status status = InTransaction("merging a snapshot", [&]() -> absl::Status {
    const auto run = [&](const std::string& sql, int64_t* count) -> absl::Status {
      if (auto s = conn_->Exec(sql, StrCat("merging ", snapshot)); !s.ok()) return s;
      *count = conn_->Changes();
      return absl::OkStatus();
    };
    const std::string merge_devices = MergeDevicesSql();
    const std::string merge_jobs = MergeJobsSql();
    for (const auto& [sql, count] : {std::pair{merge_devices.c_str(), &report.devices},
                                     std::pair{kMergeSoftware, &report.software},
                                     std::pair{merge_jobs.c_str(), &report.jobs}}) {
      if (auto s = run(sql, count); !s.ok()) return s;
    }
    auto last_id = QueryInt(*conn_, "SELECT coalesce(max(id), 0) AS value FROM main.measurements",
                            "reading the newest measurement");
    if (!last_id.ok()) return last_id.status();
    if (auto s = run(MergeMeasurementsSql(), &report.measurements); !s.ok()) return s;
    if (auto s = UpdateRunBests(*last_id); !s.ok()) return s;
    // The finished jobs' runs it brought rows to.
    if (auto s = PackMergedRuns(*conn_, *last_id); !s.ok()) return s;
    if (auto s = run(MergeImportedSql(), &report.imported); !s.ok()) return s;
    if (auto s = run(MergeRacesSql(), &report.races); !s.ok()) return s;
    int64_t rows = 0;
    if (auto s = run(MergeRaceEntriesSql(), &rows); !s.ok()) return s;
    if (auto s = run(kMergeRaceTimes, &rows); !s.ok()) return s;
    return run(MergePredictionsSql(), &report.predictions);
  });
  if (!status.ok()) return BlameCorruption(*conn_, status, snapshot);
  return report;
}

absl::StatusOr<CheckReport> SqliteStore::Check() {
  CheckReport report;
  auto version = SchemaVersion(*conn_);
  if (!version.ok()) return version.status();
  report.schema_version = *version;
  if (*version != kSchemaVersion) {
    report.problems.push_back(StrCat("schema version ", *version, ", expected ", kSchemaVersion));
  }
  for (const char* table : {"devices", "software", "jobs", "measurements", "predictions",
                            "run_bests", "run_ids", "run_rows", "run_packs", "imported",
                            "generations", "job_counts", "races", "race_entries", "race_times"}) {
    auto count =
        QueryInt(*conn_,
                 StrCat("SELECT count(*) AS value FROM sqlite_master WHERE type = 'table' AND "
                        "name = '",
                        table, "'"),
                 "reading the schema");
    if (!count.ok()) return count.status();
    if (*count != 1) report.problems.push_back(StrCat("table ", table, " is missing"));
  }
  const auto collect = [&](const char* pragma, std::string_view doing,
                           const std::function<std::string(const Statement&)>& problem) {
    auto stmt = conn_->Prepare(pragma);
    if (!stmt.ok()) {
      report.problems.push_back(std::string(stmt.status().message()));
      return;
    }
    auto s = (*stmt)->ForEachRow(doing, [&](const Statement& row) {
      if (std::string text = problem(row); !text.empty()) report.problems.push_back(text);
    });
    if (!s.ok()) report.problems.push_back(std::string(s.message()));
  };
  collect("PRAGMA integrity_check", "checking integrity", [](const Statement& row) {
    const std::string line = row.Text("integrity_check");
    return line == "ok" ? std::string() : StrCat("integrity: ", line);
  });
  collect("PRAGMA foreign_key_check", "checking references", [](const Statement& row) {
    return StrCat("dangling reference in table ", row.Text("table"), " row ", row.Int("rowid"),
                  " to ", row.Text("parent"));
  });
  report.ok = report.problems.empty();
  return report;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::QuickCheck() {
  auto stmt = conn_->Prepare("PRAGMA quick_check");
  if (!stmt.ok()) return stmt.status();
  std::vector<std::string> problems;
  auto s = (*stmt)->ForEachRow("checking the database", [&](const Statement& row) {
    if (std::string line = row.Text("quick_check"); line != "ok") problems.push_back(line);
  });
  // A page SQLite cannot read at all is an error of the statement, not a row.
  if (!s.ok()) problems.push_back(std::string(s.message()));
  return problems;
}

std::optional<WalIndexMark::Header> SqliteStore::ReadWalMark() {
  if (!wal_mark_opened_) {
    wal_mark_opened_ = true;
    auto stmt = conn_->Prepare("PRAGMA journal_mode");
    std::string mode;
    if (stmt.ok() &&
        (*stmt)
            ->ForEachRow("reading the journal mode",
                         [&](const Statement& row) { mode = row.Text("journal_mode"); })
            .ok() &&
        mode == "wal") {
      // The file SQLite opened (a URI or relative path resolved), whose
      // WAL index sits next to it.
      const char* file = sqlite3_db_filename(conn_->raw(), "main");
      if (file != nullptr && *file != '\0') {
        if (auto mark = WalIndexMark::Open(file)) wal_mark_.emplace(std::move(*mark));
      }
    }
  }
  return wal_mark_ ? wal_mark_->Read() : std::nullopt;
}

absl::StatusOr<ResultsGeneration> SqliteStore::Generation(const std::string& gpu_model) {
  // A request server asks this before every answer: while no commit has
  // happened since the last read (the WAL-index header is unchanged), the
  // answer is the one read then, and no transaction is needed.
  constexpr size_t kMaxKnownGenerations = 256;
  const std::optional<WalIndexMark::Header> mark = ReadWalMark();
  if (mark && mark == generation_mark_) {
    if (auto it = known_generations_.find(gpu_model); it != known_generations_.end()) {
      return it->second;
    }
  } else {
    known_generations_.clear();
    generation_mark_ = mark;
  }
  // Read after the mark: if a commit lands in between, the mark differs next
  // time and this is read again.
  auto stmt = conn_->Prepare(
      "SELECT measurement_id, prediction_id, deletions, race_id FROM generations "
      "WHERE gpu_model = ?1");
  if (!stmt.ok()) return stmt.status();
  ResultsGeneration g;
  auto s = (*stmt)
               ->Bind(1, gpu_model)
               .ForEachRow("reading the results generation", [&](const Statement& row) {
                 g.measurement_id = row.Int("measurement_id");
                 g.prediction_id = row.Int("prediction_id");
                 g.deletions = row.Int("deletions");
                 g.race_id = row.Int("race_id");
               });
  if (!s.ok()) return s;
  if (generation_mark_ && known_generations_.size() < kMaxKnownGenerations) {
    known_generations_.emplace(gpu_model, g);
  }
  return g;
}

absl::StatusOr<ResultsGeneration> SqliteStore::LatestGeneration() {
  auto stmt = conn_->Prepare(
      "SELECT coalesce(max(measurement_id), 0) AS measurement_id, "
      "coalesce(max(prediction_id), 0) AS prediction_id, "
      "coalesce(sum(deletions), 0) AS deletions, coalesce(max(race_id), 0) AS race_id "
      "FROM generations");
  if (!stmt.ok()) return stmt.status();
  ResultsGeneration g;
  auto s = (*stmt)->ForEachRow("reading the latest results generation", [&](const Statement& row) {
    g.measurement_id = row.Int("measurement_id");
    g.prediction_id = row.Int("prediction_id");
    g.deletions = row.Int("deletions");
    g.race_id = row.Int("race_id");
  });
  if (!s.ok()) return s;
  return g;
}

absl::StatusOr<std::map<std::string, int64_t>> SqliteStore::JobsByState() {
  // Kept by triggers on jobs (schema 7): no scan of the jobs.
  auto stmt = conn_->Prepare("SELECT state AS name, jobs AS value FROM job_counts WHERE jobs > 0");
  if (!stmt.ok()) return stmt.status();
  std::map<std::string, int64_t> out;
  auto s = (*stmt)->ForEachRow(
      "counting jobs", [&](const Statement& row) { out[row.Text("name")] = row.Int("value"); });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<DbStats> SqliteStore::Stats() {
  DbStats stats;
  auto version = SchemaVersion(*conn_);
  if (!version.ok()) return version.status();
  stats.schema_version = *version;
  struct stat st {};
  if (::stat(path().c_str(), &st) == 0) stats.file_bytes = st.st_size;
  const std::pair<const char*, int64_t*> counts[] = {
      {"SELECT count(*) AS value FROM devices", &stats.devices},
      {"SELECT count(*) AS value FROM software", &stats.software},
      {"SELECT count(*) AS value FROM measurements", &stats.measurements},
      {"SELECT count(*) AS value FROM measurements WHERE verified = 1",
       &stats.verified_measurements},
      {"SELECT count(*) AS value FROM predictions", &stats.predictions},
      {"SELECT count(*) AS value FROM imported", &stats.imported},
  };
  for (const auto& [sql, out] : counts) {
    auto value = QueryInt(*conn_, sql, "counting rows");
    if (!value.ok()) return value.status();
    *out = *value;
  }
  auto jobs = JobsByState();
  if (!jobs.ok()) return jobs.status();
  stats.jobs_by_state = *std::move(jobs);
  const std::pair<const char*, std::map<std::string, int64_t>*> groups[] = {
      {"SELECT gpu_model AS name, count(*) AS value FROM measurements GROUP BY gpu_model",
       &stats.measurements_by_gpu},
      {"SELECT gpu_model AS name, count(*) AS value FROM predictions GROUP BY gpu_model",
       &stats.predictions_by_gpu},
      {"SELECT gpu_model AS name, count(*) AS value FROM imported GROUP BY gpu_model",
       &stats.imported_by_gpu},
  };
  for (const auto& [sql, out] : groups) {
    auto stmt = conn_->Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    auto counted = (*stmt)->ForEachRow("counting rows", [out = out](const Statement& row) {
      (*out)[row.Text("name")] = row.Int("value");
    });
    if (!counted.ok()) return counted;
  }
  return stats;
}

}  // namespace crest::store::internal
