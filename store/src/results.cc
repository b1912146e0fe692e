// Predictions and measurements: inserts and lookups.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "device_columns.h"
#include "key_columns.h"
#include "key_scan.h"
#include "measurement_columns.h"
#include "prediction_columns.h"
#include "row_readers.h"
#include "sqlite_store.h"

namespace crest::store::internal {

absl::StatusOr<bool> SqliteStore::HasPrediction(const std::string& gpu_model,
                                                std::string_view model_version,
                                                const GemmKey& key) {
  auto stmt = conn_->Prepare(
      "SELECT 1 FROM predictions WHERE gpu_model = ?1 AND model_version = ?2 AND dtype = ?3 AND "
      "trans_a = ?4 AND trans_b = ?5 AND batch = ?6 AND m = ?7 AND n = ?8 AND k = ?9");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, gpu_model).Bind(2, model_version);
  BindKey(**stmt, 3, key);
  auto row = (*stmt)->Step("looking up a prediction");
  if (!row.ok()) return row.status();
  (*stmt)->Reset();
  return *row;
}

absl::StatusOr<bool> SqliteStore::InsertPrediction(std::optional<int64_t> job_id,
                                                   const std::string& gpu_model,
                                                   const tuner::GemmShape& gemm,
                                                   const tuner::Prediction& p) {
  const PredictionToWrite one{&gemm, &p};
  auto added = InsertPredictions(job_id, gpu_model, {&one, 1});
  if (!added.ok()) return added.status();
  return *added > 0;
}

absl::StatusOr<int64_t> SqliteStore::InsertPredictions(std::optional<int64_t> job_id,
                                                       const std::string& gpu_model,
                                                       std::span<const PredictionToWrite> batch) {
  if (batch.empty()) return 0;
  int64_t inserted = 0;
  auto status = InTransaction("writing predictions", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(StrCat(
        "INSERT INTO predictions(job_id, ", PredictionColumnList(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22, ?23, ?24) ON CONFLICT DO NOTHING"));
    if (!stmt.ok()) return stmt.status();
    Statement& s = **stmt;
    for (const PredictionToWrite& w : batch) {
      const tuner::Prediction& p = *w.prediction;
      s.Reset();
      s.Bind(1, job_id).Bind(2, NewUid()).Bind(3, options_.host).Bind(4, gpu_model);
      s.Bind(5, p.model_version);
      BindKey(s, 6, GemmKey::Of(*w.gemm));
      s.Bind(13, p.time_us)
          .Bind(14, p.tflops)
          .Bind(15, p.best.tile.m)
          .Bind(16, p.best.tile.n)
          .Bind(17, p.best.tiles)
          .Bind(18, p.best.waves)
          .Bind(19, p.best.tile_efficiency)
          .Bind(20, p.best.wave_efficiency)
          .Bind(21, p.alignment_factor)
          .Bind(22, p.memory_bound ? "memory" : "compute")
          .Bind(23, NowUs())
          .Bind(24, p.expected_error);
      if (auto st = s.Run("writing a prediction"); !st.ok()) return st;
      inserted += conn_->Changes();
    }
    return CountProgress(job_id, static_cast<int64_t>(batch.size()));
  });
  if (!status.ok()) return status;
  return inserted;
}

absl::StatusOr<std::map<GemmKey, PredictionRow>> SqliteStore::FindPredictions(
    const std::string& gpu_model, std::string_view model_version, std::span<const GemmKey> keys) {
  const std::vector<GemmKey> wanted = SortedUnique(keys);
  std::map<GemmKey, PredictionRow> out;
  auto status = ScanKeyRanges(
      *conn_,
      "time_us, tflops, tile_m, tile_n, tiles, waves, tile_efficiency, wave_efficiency, "
      "alignment_factor, bound, host, created_us, expected_error",
      "FROM predictions WHERE gpu_model = ?1 AND model_version = ?2", wanted,
      [&](Statement& s) { s.Bind(1, gpu_model).Bind(2, model_version); },
      [&](size_t i, const Statement& s) {
        PredictionRow p;
        p.gpu_model = gpu_model;
        p.model_version = std::string(model_version);
        p.key = wanted[i];
        p.time_us = s.Double("time_us");
        p.tflops = s.Double("tflops");
        p.tile_m = static_cast<int>(s.Int("tile_m"));
        p.tile_n = static_cast<int>(s.Int("tile_n"));
        p.tiles = s.Int("tiles");
        p.waves = s.Int("waves");
        p.tile_efficiency = s.Double("tile_efficiency");
        p.wave_efficiency = s.Double("wave_efficiency");
        p.alignment_factor = s.Double("alignment_factor");
        p.bound = s.Text("bound");
        p.host = s.Text("host");
        p.created_us = s.Int("created_us");
        p.expected_error = s.Double("expected_error");
        out.emplace(wanted[i], std::move(p));
      },
      "looking up predictions");
  if (!status.ok()) return status;
  return out;
}

// Replayed and measured runs of one GPU model never share a database: an
// answer pools the runs of a GPU model, and must not pool the two kinds.
absl::Status SqliteStore::RefuseMixedKinds(const tuner::DeviceInfo& d, const std::string& host) {
  auto other = conn_->Prepare(
      "SELECT count(*) AS n FROM devices WHERE gpu_model = ?1 AND (replay = '') != (?2 = '') "
      "AND NOT (uuid = ?3 AND host = ?4)");
  if (!other.ok()) return other.status();
  (*other)->Bind(1, d.gpu_model).Bind(2, d.replay).Bind(3, d.uuid).Bind(4, host);
  auto row = (*other)->Step("checking the database's devices");
  if (!row.ok()) return row.status();
  const int64_t others = (*other)->Int("n");
  (*other)->Reset();  // a cached statement left stepping would block VACUUM INTO
  if (others == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(StrCat(
      path(), ": holds ", d.replay.empty() ? "replayed" : "measured", " runs of ", d.gpu_model,
      "; ", d.replay.empty() ? "measured" : "replayed",
      " runs of it go in a database of their own (another --db), so that no answer pools the "
      "two kinds"));
}

absl::StatusOr<std::pair<int64_t, int64_t>> SqliteStore::RegisterDevice(
    const tuner::DeviceInfo& d, const tuner::SoftwareInfo& sw) {
  std::pair<int64_t, int64_t> ids;
  const std::string host = d.host.empty() ? options_.host : d.host;
  absl::Status status = InTransaction("registering a device", [&]() -> absl::Status {
    if (auto s = RefuseMixedKinds(d, host); !s.ok()) return s;
    std::string params = "?1";
    for (size_t i = 2; i <= DeviceColumns().size(); ++i) params += StrCat(", ?", i);
    auto dev = conn_->Prepare(
        StrCat("INSERT INTO devices(", DeviceColumnList(), ") VALUES (", params,
               ") ON CONFLICT(uuid, host) DO UPDATE SET name = excluded.name, gpu_model = "
               "excluded.gpu_model, sm_clock_mhz = excluded.sm_clock_mhz, memory_clock_mhz = "
               "excluded.memory_clock_mhz, replay = excluded.replay RETURNING id"));
    if (!dev.ok()) return dev.status();
    tuner::DeviceInfo registered = d;
    registered.host = host;
    BindDeviceColumns(**dev, 1, registered);
    auto row = (*dev)->Step("registering a device");
    if (!row.ok()) return row.status();
    ids.first = (*dev)->Int("id");
    if (auto s = (*dev)->Run("registering a device"); !s.ok()) return s;
    auto soft = conn_->Prepare(
        "INSERT INTO software(driver, cuda_runtime, cublaslt) VALUES (?1, ?2, ?3) "
        "ON CONFLICT DO UPDATE SET driver = excluded.driver RETURNING id");
    if (!soft.ok()) return soft.status();
    (*soft)->Bind(1, sw.driver).Bind(2, sw.cuda_runtime).Bind(3, sw.cublaslt);
    row = (*soft)->Step("registering software");
    if (!row.ok()) return row.status();
    ids.second = (*soft)->Int("id");
    return (*soft)->Run("registering software");
  });
  if (!status.ok()) return status;
  return ids;
}

absl::StatusOr<bool> SqliteStore::HasMeasurement(int64_t device_id, int64_t software_id,
                                                 const GemmKey& key,
                                                 const tuner::MeasureMode& mode) {
  auto stmt = conn_->Prepare(
      "SELECT 1 FROM measurements WHERE gpu_model = (SELECT gpu_model FROM devices WHERE id = ?1) "
      "AND dtype = ?3 AND trans_a = ?4 AND trans_b = ?5 AND batch = ?6 AND m = ?7 AND n = ?8 "
      "AND k = ?9 AND device_id = ?1 AND software_id = ?2 AND cache_mode = ?10 "
      "AND clock_policy = ?11 LIMIT 1");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, device_id).Bind(2, software_id).Bind(10, tuner::CacheModeName(mode.cache));
  (*stmt)->Bind(11, tuner::ClockPolicyName(mode.clocks));
  BindKey(**stmt, 3, key);
  auto row = (*stmt)->Step("looking up a measurement");
  if (!row.ok()) return row.status();
  (*stmt)->Reset();
  return *row;
}

absl::Status SqliteStore::InsertMeasurement(std::optional<int64_t> job_id, int64_t device_id,
                                            int64_t software_id, const std::string& gpu_model,
                                            int sm_count, const tuner::MeasuredGemm& mg) {
  return InTransaction("writing a measurement", [&]() -> absl::Status {
    // uid, job, device, software, GPU model, the key (7), then the values.
    std::string params = "?1";
    for (size_t i = 2; i <= 12 + MeasurementColumns().size(); ++i) params += StrCat(", ?", i);
    auto stmt = conn_->Prepare(
        StrCat("INSERT INTO measurements(uid, job_id, device_id, software_id, gpu_model, ",
               KeyColumnList(), ", ", MeasurementColumnList(""), ") VALUES (", params, ")"));
    if (!stmt.ok()) return stmt.status();
    MeasurementRow row = MeasurementRowOf(mg);
    row.created_us = NowUs();
    int64_t first_id = 0;
    for (const tuner::AlgoResult& r : mg.algos) {
      tuner::TileEstimate tw;
      if (r.algo.tile_m > 0 && r.algo.tile_n > 0 && sm_count > 0) {
        tw = tuner::QuantizeTiles(mg.gemm, {r.algo.tile_m, r.algo.tile_n}, sm_count);
      }
      row.result = r;
      row.tiles = tw.tiles;
      row.waves = tw.waves;
      row.tile_efficiency = tw.tile_efficiency;
      row.wave_efficiency = tw.wave_efficiency;
      Statement& s = (*stmt)->Reset();
      s.Bind(1, NewUid()).Bind(2, job_id).Bind(3, device_id).Bind(4, software_id);
      s.Bind(5, gpu_model);
      BindKey(s, 6, row.key);
      BindMeasurementColumns(s, 13, row);
      if (auto st = s.Run("writing a measurement"); !st.ok()) return st;
      if (first_id == 0) first_id = conn_->LastInsertRowId();
    }
    if (first_id > 0) {
      if (auto st = UpdateRunBests(first_id - 1); !st.ok()) return st;
    }
    return CountProgress(job_id, 1);
  });
}

absl::Status SqliteStore::UpdateRunBests(int64_t after_id) {
  auto runs = conn_->Prepare(StrCat(
      "INSERT INTO run_bests(gpu_model, cache_mode, clock_policy, software_id, ", KeyColumnList(),
      ", job_id, device_id, measurement_id, median_us, ci_low_us, ci_high_us) "
      "SELECT gpu_model, cache_mode, clock_policy, software_id, ",
      KeyColumnList(),
      ", coalesce(job_id, 0), device_id, id, median_us, ci_low_us, ci_high_us "
      "FROM measurements WHERE id > ?1 AND verified = 1 "
      "ON CONFLICT DO UPDATE SET measurement_id = excluded.measurement_id, "
      "median_us = excluded.median_us, ci_low_us = excluded.ci_low_us, "
      "ci_high_us = excluded.ci_high_us WHERE excluded.median_us < run_bests.median_us"));
  if (!runs.ok()) return runs.status();
  return (*runs)->Bind(1, after_id).Run("updating each run's best");
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::SoftwareVersions(const SoftwarePin& pin) {
  // Software versions, newest first (cuBLASLt, then runtime, then driver),
  // ordered here: a handful of rows, for which SQLite's ORDER BY opened a
  // sorter at every answer.
  auto versions = conn_->Prepare(
      "SELECT id, cublaslt, cuda_runtime, driver FROM software WHERE (?1 IS NULL OR cublaslt = ?1) "
      "AND (?2 IS NULL OR cuda_runtime = ?2) AND (?3 IS NULL OR driver = ?3)");
  if (!versions.ok()) return versions.status();
  (*versions)->Bind(1, pin.cublaslt).Bind(2, pin.cuda_runtime).Bind(3, pin.driver);
  struct Version {
    int64_t cublaslt, cuda_runtime;
    std::string driver;  // compared as SQLite compares texts: by bytes
    int64_t id;
  };
  std::vector<Version> found;
  auto listed = (*versions)->ForEachRow("listing software versions", [&](const Statement& row) {
    found.push_back(
        {row.Int("cublaslt"), row.Int("cuda_runtime"), row.Text("driver"), row.Int("id")});
  });
  if (!listed.ok()) return listed;
  std::sort(found.begin(), found.end(), [](const Version& a, const Version& b) {
    return std::tie(a.cublaslt, a.cuda_runtime, a.driver) >
           std::tie(b.cublaslt, b.cuda_runtime, b.driver);
  });
  std::vector<int64_t> software_ids;
  software_ids.reserve(found.size());
  for (const Version& v : found) software_ids.push_back(v.id);
  return software_ids;
}

absl::StatusOr<std::vector<RunRecord>> SqliteStore::DescribeRuns(std::span<const RunKey> runs) {
  // Built once: every ranking describes its runs, and building the text cost
  // more than reading them (1.3% of a fwd ranking under callgrind).
  static const std::string kSql = StrCat(
      "SELECT j.uid AS job_uid, j.created_us AS job_created_us, "
      "CASE WHEN json_valid(j.spec) THEN json_extract(j.spec, '$.name') END AS job_name, ",
      JoinedDeviceColumns(),
      ", s.driver, s.cuda_runtime, s.cublaslt FROM devices AS d JOIN software AS s ON s.id = ?3 "
      "LEFT JOIN jobs AS j ON j.id = ?1 WHERE d.id = ?2");
  auto stmt = conn_->Prepare(kSql);
  if (!stmt.ok()) return stmt.status();
  std::vector<RunRecord> out;
  out.reserve(runs.size());
  for (const RunKey& key : runs) {
    Statement& s = (*stmt)->Reset();
    s.Bind(1, key.job_id).Bind(2, key.device_id).Bind(3, key.software_id);
    auto found = s.Step("describing a run");
    if (!found.ok()) return found.status();
    if (!*found) {
      return absl::NotFoundError(StrCat("run of job ", key.job_id, ": device ", key.device_id,
                                        " or software ", key.software_id, " not found in ",
                                        path()));
    }
    RunRecord r;
    r.key = key;
    r.device = ReadDevice(s);
    r.software = {s.Text("driver"), s.Int("cuda_runtime"), s.Int("cublaslt")};
    r.info.job_id = key.job_id;
    if (!s.IsNull("job_uid")) {
      r.info.job_uid = s.Text("job_uid");
      r.info.started_us = s.Int("job_created_us");
      if (!s.IsNull("job_name")) r.info.name = s.Text("job_name");
    }
    r.info.device_uuid = r.device.uuid;
    r.info.host = r.device.host;
    out.push_back(std::move(r));
  }
  (*stmt)->Reset();
  return out;
}

absl::StatusOr<MeasurementRow> SqliteStore::GetMeasurement(int64_t id) {
  // Built once: a lookup reads one row, and building the text cost more.
  static const std::string kSql =
      StrCat("SELECT m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, m.id, m.job_id, ",
             MeasurementColumnList("m."), ", ", JoinedDeviceColumns(),
             ", s.driver, s.cuda_runtime, s.cublaslt "
             "FROM measurements AS m JOIN devices AS d ON d.id = m.device_id "
             "JOIN software AS s ON s.id = m.software_id WHERE m.id = ?1");
  auto stmt = conn_->Prepare(kSql);
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  auto found = s.Bind(1, id).Step("reading a measurement");
  if (!found.ok()) return found.status();
  if (!*found) return absl::NotFoundError(StrCat("measurement ", id, " not found in ", path()));
  MeasurementRow r = ReadMeasurement(s);
  s.Reset();
  return r;
}

}  // namespace crest::store::internal
