// Predictions and measurements: inserts and lookups.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "key_batches.h"
#include "key_columns.h"
#include "measurement_columns.h"
#include "row_readers.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

// The WHERE clause for a KeyRange: equality on fixed dimensions and
// BETWEEN only on the one that varies, so the index serves every column
// up to the range. Parameters ?3..?12; ?1 and ?2 are the caller's.
std::string KeyRangeWhere(int varying) {
  return StrCat("dtype = ?3 AND trans_a = ?4 AND trans_b = ?5 AND batch = ?6 AND ",
                varying == 0 ? "m BETWEEN ?7 AND ?8" : "m = ?7", " AND ",
                varying == 1 ? "n BETWEEN ?9 AND ?10" : "n = ?9", " AND ",
                varying == 2 ? "k BETWEEN ?11 AND ?12" : "k = ?11");
}

void BindRange(Statement& s, const KeyRange& r) {
  s.Bind(3, DTypeName(r.prefix.dtype))
      .Bind(4, static_cast<int64_t>(r.prefix.a_transposed))
      .Bind(5, static_cast<int64_t>(r.prefix.b_transposed))
      .Bind(6, r.prefix.batch)
      .Bind(7, r.m_lo)
      .Bind(9, r.n_lo)
      .Bind(11, r.k_lo);
  if (r.varying == 0) s.Bind(8, r.m_hi);
  if (r.varying == 1) s.Bind(10, r.n_hi);
  if (r.varying == 2) s.Bind(12, r.k_hi);
}

// Runs `select` (the key columns dtype … k by name, then the caller's) over
// the index ranges covering `wanted`, calling `on_row` for rows whose key is
// wanted. `bind` binds the caller's parameters ?1 and ?2.
absl::Status ScanKeyRanges(Connection& conn, const std::string& select,
                           const std::set<GemmKey>& wanted,
                           const std::function<void(Statement&)>& bind,
                           const std::function<void(GemmKey, const Statement&)>& on_row,
                           std::string_view doing) {
  for (const KeyRange& range : BatchKeys(wanted)) {
    auto stmt = conn.Prepare(StrCat(select, " AND ", KeyRangeWhere(range.varying)));
    if (!stmt.ok()) return stmt.status();
    bind(**stmt);
    BindRange(**stmt, range);
    auto s = (*stmt)->ForEachRow(doing, [&](const Statement& row) {
      GemmKey key = ReadKey(row);
      if (wanted.contains(key)) on_row(std::move(key), row);
    });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

BestTime ReadBestTime(const Statement& s, int64_t software_id) {
  BestTime b;
  b.median_us = s.Double("median_us");
  b.ci_low_us = s.Double("ci_low_us");
  b.ci_high_us = s.Double("ci_high_us");
  b.measurement_id = s.Int("measurement_id");
  b.device_id = s.Int("device_id");
  b.software_id = software_id;
  b.devices = static_cast<int>(s.Int("devices"));
  return b;
}

// When each run's job started (its created_us; 0 outside a job, or for a
// job no longer in the database): a few jobs, however many rows.
class JobStarts {
 public:
  explicit JobStarts(Connection& conn) : conn_(conn) {}
  absl::StatusOr<int64_t> Of(int64_t job_id) {
    if (job_id == 0) return 0;
    auto [it, added] = started_.try_emplace(job_id, 0);
    if (!added) return it->second;
    if (stmt_ == nullptr) {
      auto prepared = conn_.Prepare("SELECT created_us FROM jobs WHERE id = ?1");
      if (!prepared.ok()) return prepared.status();
      stmt_ = *prepared;
    }
    auto found = stmt_->Reset().Bind(1, job_id).Step("reading a job's start");
    if (!found.ok()) return found.status();
    if (*found) it->second = stmt_->Int("created_us");
    stmt_->Reset();
    return it->second;
  }

 private:
  Connection& conn_;
  Statement* stmt_ = nullptr;  // the connection's
  std::map<int64_t, int64_t> started_;
};

}  // namespace

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
                                                   const GemmShape& gemm, const Prediction& p) {
  bool inserted = false;
  auto status = InTransaction("writing a prediction", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(
        "INSERT INTO predictions(uid, job_id, host, gpu_model, model_version, dtype, trans_a, "
        "trans_b, batch, m, n, k, time_us, tflops, tile_m, tile_n, tiles, waves, "
        "tile_efficiency, wave_efficiency, alignment_factor, bound, created_us, expected_error) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22, ?23, ?24) ON CONFLICT DO NOTHING");
    if (!stmt.ok()) return stmt.status();
    Statement& s = **stmt;
    s.Bind(1, NewUid()).Bind(2, job_id).Bind(3, options_.host).Bind(4, gpu_model);
    s.Bind(5, std::string(p.model_version));
    BindKey(s, 6, GemmKey::Of(gemm));
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
    inserted = conn_->Changes() > 0;
    return CountProgress(job_id, 1);
  });
  if (!status.ok()) return status;
  return inserted;
}

absl::StatusOr<std::map<GemmKey, PredictionRow>> SqliteStore::FindPredictions(
    const std::string& gpu_model, std::string_view model_version, std::span<const GemmKey> keys) {
  const std::set<GemmKey> wanted(keys.begin(), keys.end());
  std::map<GemmKey, PredictionRow> out;
  auto status = ScanKeyRanges(
      *conn_,
      "SELECT dtype, trans_a, trans_b, batch, m, n, k, time_us, tflops, tile_m, tile_n, tiles, "
      "waves, tile_efficiency, wave_efficiency, alignment_factor, bound, host, created_us, "
      "expected_error "
      "FROM predictions WHERE gpu_model = ?1 AND model_version = ?2",
      wanted, [&](Statement& s) { s.Bind(1, gpu_model).Bind(2, model_version); },
      [&](GemmKey key, const Statement& s) {
        PredictionRow p;
        p.gpu_model = gpu_model;
        p.model_version = std::string(model_version);
        p.key = key;
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
        out.emplace(std::move(key), std::move(p));
      },
      "looking up predictions");
  if (!status.ok()) return status;
  return out;
}

// Replayed and measured runs of one GPU model never share a database: an
// answer pools the runs of a GPU model, and must not pool the two kinds.
absl::Status SqliteStore::RefuseMixedKinds(const DeviceInfo& d, const std::string& host) {
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

absl::StatusOr<std::pair<int64_t, int64_t>> SqliteStore::RegisterDevice(const DeviceInfo& d,
                                                                        const SoftwareInfo& sw) {
  std::pair<int64_t, int64_t> ids;
  const std::string host = d.host.empty() ? options_.host : d.host;
  absl::Status status = InTransaction("registering a device", [&]() -> absl::Status {
    if (auto s = RefuseMixedKinds(d, host); !s.ok()) return s;
    auto dev = conn_->Prepare(
        "INSERT INTO devices(uuid, host, name, gpu_model, sm_count, cc_major, cc_minor, "
        "l2_bytes, memory_bytes, sm_clock_mhz, memory_clock_mhz, replay) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT(uuid, host) DO UPDATE "
        "SET name = excluded.name, gpu_model = excluded.gpu_model, sm_clock_mhz = "
        "excluded.sm_clock_mhz, memory_clock_mhz = excluded.memory_clock_mhz, replay = "
        "excluded.replay RETURNING id");
    if (!dev.ok()) return dev.status();
    (*dev)
        ->Bind(1, d.uuid)
        .Bind(2, host)
        .Bind(3, d.name)
        .Bind(4, d.gpu_model)
        .Bind(5, d.sm_count)
        .Bind(6, d.cc_major)
        .Bind(7, d.cc_minor)
        .Bind(8, d.l2_bytes)
        .Bind(9, d.memory_bytes)
        .Bind(10, d.sm_clock_mhz)
        .Bind(11, d.memory_clock_mhz)
        .Bind(12, d.replay);
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
                                                 const GemmKey& key, const MeasureMode& mode) {
  auto stmt = conn_->Prepare(
      "SELECT 1 FROM measurements WHERE gpu_model = (SELECT gpu_model FROM devices WHERE id = ?1) "
      "AND dtype = ?3 AND trans_a = ?4 AND trans_b = ?5 AND batch = ?6 AND m = ?7 AND n = ?8 "
      "AND k = ?9 AND device_id = ?1 AND software_id = ?2 AND cache_mode = ?10 "
      "AND clock_policy = ?11 LIMIT 1");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, device_id).Bind(2, software_id).Bind(10, CacheModeName(mode.cache));
  (*stmt)->Bind(11, ClockPolicyName(mode.clocks));
  BindKey(**stmt, 3, key);
  auto row = (*stmt)->Step("looking up a measurement");
  if (!row.ok()) return row.status();
  (*stmt)->Reset();
  return *row;
}

absl::Status SqliteStore::InsertMeasurement(std::optional<int64_t> job_id, int64_t device_id,
                                            int64_t software_id, const std::string& gpu_model,
                                            int sm_count, const MeasuredGemm& mg) {
  return InTransaction("writing a measurement", [&]() -> absl::Status {
    // uid, job, device, software, GPU model, the key (7), then the values.
    std::string params = "?1";
    for (size_t i = 2; i <= 12 + MeasurementColumns().size(); ++i) params += StrCat(", ?", i);
    auto stmt = conn_->Prepare(StrCat(
        "INSERT INTO measurements(uid, job_id, device_id, software_id, gpu_model, dtype, "
        "trans_a, trans_b, batch, m, n, k, ",
        MeasurementColumnList(""), ") VALUES (", params, ")"));
    if (!stmt.ok()) return stmt.status();
    MeasurementRow row;
    row.key = GemmKey::Of(mg.gemm);
    row.lda = mg.lda;
    row.ldb = mg.ldb;
    row.ldc = mg.ldc;
    row.dtype_out = std::string(DTypeName(OutputDType(mg.gemm.dtype)));
    row.compute_type = mg.compute_type;
    row.mode = mg.mode;
    row.settled_clock_mhz = mg.settled_clock_mhz;
    row.created_us = NowUs();
    int64_t first_id = 0;
    for (const AlgoResult& r : mg.algos) {
      TileEstimate tw;
      if (r.algo.tile_m > 0 && r.algo.tile_n > 0 && sm_count > 0) {
        tw = QuantizeTiles(mg.gemm, {r.algo.tile_m, r.algo.tile_n}, sm_count);
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
      if (auto st = UpdateBest(first_id - 1); !st.ok()) return st;
    }
    return CountProgress(job_id, 1);
  });
}

absl::Status SqliteStore::UpdateBest(int64_t after_id) {
  // Each run's best for the keys of the new rows...
  auto runs = conn_->Prepare(
      "INSERT INTO run_bests(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, "
      "trans_b, batch, m, n, k, job_id, device_id, measurement_id, median_us, ci_low_us, "
      "ci_high_us) "
      "SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, "
      "m, n, k, coalesce(job_id, 0), device_id, id, median_us, ci_low_us, ci_high_us "
      "FROM measurements WHERE id > ?1 AND verified = 1 "
      "ON CONFLICT DO UPDATE SET measurement_id = excluded.measurement_id, "
      "median_us = excluded.median_us, ci_low_us = excluded.ci_low_us, "
      "ci_high_us = excluded.ci_high_us WHERE excluded.median_us < run_bests.median_us");
  if (!runs.ok()) return runs.status();
  if (auto s = (*runs)->Bind(1, after_id).Run("updating each run's best"); !s.ok()) return s;
  // ...each device's best across runs...
  auto best = conn_->Prepare(
      "INSERT INTO best_measurements(gpu_model, cache_mode, clock_policy, software_id, dtype, "
      "trans_a, trans_b, batch, m, n, k, device_id, measurement_id, median_us) "
      "SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, "
      "m, n, k, device_id, id, median_us FROM measurements WHERE id > ?1 AND verified = 1 "
      "ON CONFLICT DO UPDATE SET device_id = excluded.device_id, "
      "measurement_id = excluded.measurement_id, median_us = excluded.median_us "
      "WHERE excluded.median_us < best_measurements.median_us");
  if (!best.ok()) return best.status();
  if (auto s = (*best)->Bind(1, after_id).Run("updating the best measurements"); !s.ok()) return s;
  if (conn_->Changes() == 0) return absl::OkStatus();  // no device's best moved: answers stand
  // ...then the median device of those keys again, reading only their rows.
  auto answers = conn_->Prepare(
      "WITH touched AS (SELECT DISTINCT gpu_model, cache_mode, clock_policy, software_id, dtype, "
      "trans_a, trans_b, batch, m, n, k FROM measurements WHERE id > ?1 AND verified = 1), "
      "ranked AS (SELECT b.*, row_number() OVER (PARTITION BY b.gpu_model, b.cache_mode, "
      "b.clock_policy, b.software_id, b.dtype, b.trans_a, b.trans_b, b.batch, b.m, b.n, b.k "
      "ORDER BY b.median_us, b.device_id) AS rank, count(*) OVER (PARTITION BY b.gpu_model, "
      "b.cache_mode, b.clock_policy, b.software_id, b.dtype, b.trans_a, b.trans_b, b.batch, b.m, "
      "b.n, b.k) AS devices "
      "FROM touched AS t JOIN best_measurements AS b ON b.gpu_model = t.gpu_model AND "
      "b.cache_mode = t.cache_mode AND b.clock_policy = t.clock_policy AND "
      "b.software_id = t.software_id AND b.dtype = t.dtype AND b.trans_a = t.trans_a AND "
      "b.trans_b = t.trans_b AND b.batch = t.batch AND b.m = t.m AND b.n = t.n AND b.k = t.k) "
      "INSERT OR REPLACE INTO best_answers(gpu_model, cache_mode, clock_policy, software_id, "
      "dtype, trans_a, trans_b, batch, m, n, k, device_id, measurement_id, median_us, ci_low_us, "
      "ci_high_us, devices) "
      "SELECT r.gpu_model, r.cache_mode, r.clock_policy, r.software_id, r.dtype, r.trans_a, "
      "r.trans_b, r.batch, r.m, r.n, r.k, r.device_id, r.measurement_id, r.median_us, "
      "m.ci_low_us, m.ci_high_us, r.devices FROM ranked AS r "
      "JOIN measurements AS m ON m.id = r.measurement_id WHERE r.rank = (r.devices + 1) / 2");
  if (!answers.ok()) return answers.status();
  return (*answers)->Bind(1, after_id).Run("updating the answers across devices");
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::SoftwareVersions(const SoftwarePin& pin) {
  // Software versions, newest first (cuBLASLt, then runtime, then driver).
  auto versions = conn_->Prepare(
      "SELECT id FROM software WHERE (?1 IS NULL OR cublaslt = ?1) AND "
      "(?2 IS NULL OR cuda_runtime = ?2) AND (?3 IS NULL OR driver = ?3) "
      "ORDER BY cublaslt DESC, cuda_runtime DESC, driver DESC");
  if (!versions.ok()) return versions.status();
  (*versions)->Bind(1, pin.cublaslt).Bind(2, pin.cuda_runtime).Bind(3, pin.driver);
  std::vector<int64_t> software_ids;
  auto listed = (*versions)->ForEachRow("listing software versions", [&](const Statement& row) {
    software_ids.push_back(row.Int("id"));
  });
  if (!listed.ok()) return listed;
  return software_ids;
}

absl::StatusOr<std::map<GemmKey, BestTime>> SqliteStore::BestTimes(const std::string& gpu_model,
                                                                   std::span<const GemmKey> keys,
                                                                   const SoftwarePin& pin,
                                                                   const MeasureMode& mode) {
  std::set<GemmKey> wanted(keys.begin(), keys.end());
  auto software_ids = SoftwareVersions(pin);
  if (!software_ids.ok()) return software_ids.status();
  // Each key takes the newest version that has it: probe versions newest
  // first and drop keys as they are found.
  std::map<GemmKey, BestTime> best;
  for (int64_t software_id : *software_ids) {
    if (wanted.empty()) break;
    auto status = ScanKeyRanges(
        *conn_,
        "SELECT dtype, trans_a, trans_b, batch, m, n, k, median_us, measurement_id, device_id, "
        "devices, ci_low_us, ci_high_us FROM best_answers WHERE gpu_model = ?1 AND "
        "software_id = ?2 AND cache_mode = ?13 AND clock_policy = ?14",
        wanted,
        [&](Statement& s) {
          s.Bind(1, gpu_model).Bind(2, software_id);
          s.Bind(13, CacheModeName(mode.cache)).Bind(14, ClockPolicyName(mode.clocks));
        },
        [&](GemmKey key, const Statement& s) {
          best.emplace(std::move(key), ReadBestTime(s, software_id));
        },
        "looking up measurements");
    if (!status.ok()) return status;
    for (const auto& [key, unused] : best) wanted.erase(key);
  }
  return best;
}

absl::StatusOr<std::map<GemmKey, std::vector<RunBest>>> SqliteStore::RunBests(
    const std::string& gpu_model, std::span<const GemmKey> keys, int64_t software_id,
    const MeasureMode& mode, AlgoChoice algo, std::optional<RunKey> only_run) {
  const std::set<GemmKey> wanted(keys.begin(), keys.end());
  std::map<GemmKey, std::vector<RunBest>> out;
  // cuBLASLt's first choice is one row per GEMM of a run (the fastest, if a
  // run measured the GEMM more than once): kept below like run_bests keeps
  // the fastest of all.
  std::string select =
      algo == AlgoChoice::kBest
          ? "SELECT dtype, trans_a, trans_b, batch, m, n, k, job_id, device_id, measurement_id, "
            "median_us, ci_low_us, ci_high_us FROM run_bests WHERE gpu_model = ?1 AND "
            "cache_mode = ?2 AND clock_policy = ?13 AND software_id = ?14"
          : "SELECT dtype, trans_a, trans_b, batch, m, n, k, coalesce(job_id, 0) AS job_id, "
            "device_id, id AS measurement_id, median_us, ci_low_us, ci_high_us FROM "
            "measurements WHERE gpu_model = ?1 AND cache_mode = ?2 AND clock_policy = ?13 AND "
            "software_id = ?14 AND verified = 1 AND heuristic_rank = 0";
  if (only_run && algo == AlgoChoice::kBest) {
    // SQLite's planner would take the primary key (fewer columns to look
    // up), which holds every run's rows of the range.
    select.replace(select.find("FROM run_bests WHERE"), 20,
                   "FROM run_bests INDEXED BY run_bests_by_run WHERE");
    select += " AND job_id = ?15 AND device_id = ?16";
  } else if (only_run) {
    select += " AND coalesce(job_id, 0) = ?15 AND device_id = ?16";
  }
  auto status = ScanKeyRanges(
      *conn_, select, wanted,
      [&](Statement& s) {
        s.Bind(1, gpu_model).Bind(2, CacheModeName(mode.cache));
        s.Bind(13, ClockPolicyName(mode.clocks)).Bind(14, software_id);
        if (only_run) s.Bind(15, only_run->job_id).Bind(16, only_run->device_id);
      },
      [&](GemmKey key, const Statement& s) {
        RunBest b;  // read in the SELECT's order
        b.run = {s.Int("job_id"), s.Int("device_id"), software_id};
        b.measurement_id = s.Int("measurement_id");
        b.median_us = s.Double("median_us");
        b.ci_low_us = s.Double("ci_low_us");
        b.ci_high_us = s.Double("ci_high_us");
        out[std::move(key)].push_back(b);
      },
      "looking up each run's measurements");
  if (!status.ok()) return status;
  // One row per run: the fastest. run_bests has one already; a run's first
  // choice may have been recorded more than once.
  if (algo == AlgoChoice::kDefault) {
    for (auto& [key, runs] : out) {
      std::sort(runs.begin(), runs.end(), [](const RunBest& a, const RunBest& b) {
        return std::tie(a.run, a.median_us) < std::tie(b.run, b.median_us);
      });
      runs.erase(std::unique(runs.begin(), runs.end(),
                             [](const RunBest& a, const RunBest& b) { return a.run == b.run; }),
                 runs.end());
    }
  }
  JobStarts starts(*conn_);
  for (auto& [key, runs] : out) {
    for (RunBest& b : runs) {
      auto started = starts.Of(b.run.job_id);
      if (!started.ok()) return started.status();
      b.started_us = *started;
    }
  }
  return out;
}

absl::StatusOr<std::vector<RunBest>> SqliteStore::ListRuns(const std::string& gpu_model,
                                                           int64_t software_id,
                                                           const MeasureMode& mode) {
  // A loose scan of run_bests_by_run: each step seeks to the next device
  // of the same job, else to the next job (a row value (job, device) > (…)
  // would seek on the job alone and then read the whole run).
  constexpr const char* kRuns =
      "SELECT job_id, device_id FROM run_bests INDEXED BY run_bests_by_run WHERE gpu_model = ?1 "
      "AND cache_mode = ?2 AND clock_policy = ?3 AND software_id = ?4 AND ";
  auto same_job = conn_->Prepare(
      StrCat(kRuns, "job_id = ?5 AND device_id > ?6 ORDER BY device_id LIMIT 1"));
  if (!same_job.ok()) return same_job.status();
  auto next_job =
      conn_->Prepare(StrCat(kRuns, "job_id > ?5 ORDER BY job_id, device_id LIMIT 1"));
  if (!next_job.ok()) return next_job.status();
  std::vector<RunBest> runs;
  JobStarts starts(*conn_);
  RunKey last{-1, -1, software_id};
  for (;;) {
    std::optional<RunKey> found;
    for (Statement* s : {*same_job, *next_job}) {
      s->Reset();
      s->Bind(1, gpu_model).Bind(2, CacheModeName(mode.cache)).Bind(3, ClockPolicyName(mode.clocks));
      s->Bind(4, software_id).Bind(5, last.job_id).Bind(6, last.device_id);
      auto row = s->Step("listing runs");
      if (!row.ok()) return row.status();
      if (*row) found = RunKey{s->Int("job_id"), s->Int("device_id"), software_id};
      s->Reset();
      if (found) break;
    }
    if (!found) break;
    last = *found;
    RunBest run;
    run.run = last;
    auto started = starts.Of(last.job_id);
    if (!started.ok()) return started.status();
    run.started_us = *started;
    runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end(), [](const RunBest& a, const RunBest& b) {
    return std::tie(a.started_us, a.run) > std::tie(b.started_us, b.run);
  });
  return runs;
}

absl::StatusOr<std::vector<RunRecord>> SqliteStore::DescribeRuns(std::span<const RunKey> runs) {
  auto stmt = conn_->Prepare(StrCat(
      "SELECT j.uid AS job_uid, j.created_us AS job_created_us, "
      "CASE WHEN json_valid(j.spec) THEN json_extract(j.spec, '$.name') END AS job_name, ",
      kDeviceColumns,
      ", s.driver, s.cuda_runtime, s.cublaslt FROM devices AS d JOIN software AS s ON s.id = ?3 "
      "LEFT JOIN jobs AS j ON j.id = ?1 WHERE d.id = ?2"));
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
  auto stmt = conn_->Prepare(StrCat(
      "SELECT m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, m.id, m.job_id, ",
      MeasurementColumnList("m."), ", ", kDeviceColumns, ", s.driver, s.cuda_runtime, s.cublaslt "
      "FROM measurements AS m JOIN devices AS d ON d.id = m.device_id "
      "JOIN software AS s ON s.id = m.software_id WHERE m.id = ?1"));
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  auto found = s.Bind(1, id).Step("reading a measurement");
  if (!found.ok()) return found.status();
  if (!*found) return absl::NotFoundError(StrCat("measurement ", id, " not found in ", path()));
  MeasurementRow r = ReadMeasurement(s);
  s.Reset();
  return r;
}

absl::StatusOr<std::vector<std::pair<GemmKey, BestTime>>> SqliteStore::AllBestTimes(
    const std::string& gpu_model, const SoftwarePin& pin, const MeasureMode& mode) {
  // Every key's answers, newest software first; the first of each key wins.
  auto stmt = conn_->Prepare(
      "SELECT b.dtype, b.trans_a, b.trans_b, b.batch, b.m, b.n, b.k, b.median_us, b.ci_low_us, "
      "b.ci_high_us, b.measurement_id, b.device_id, b.software_id, b.devices "
      "FROM best_answers AS b JOIN software AS s ON s.id = b.software_id "
      "WHERE b.gpu_model = ?1 AND b.cache_mode = ?2 AND b.clock_policy = ?3 AND "
      "(?4 IS NULL OR s.cublaslt = ?4) AND (?5 IS NULL OR s.cuda_runtime = ?5) AND "
      "(?6 IS NULL OR s.driver = ?6) "
      "ORDER BY b.dtype, b.trans_a, b.trans_b, b.batch, b.m, b.n, b.k, s.cublaslt DESC, "
      "s.cuda_runtime DESC, s.driver DESC");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, gpu_model).Bind(2, CacheModeName(mode.cache)).Bind(3, ClockPolicyName(mode.clocks));
  (*stmt)->Bind(4, pin.cublaslt).Bind(5, pin.cuda_runtime).Bind(6, pin.driver);
  std::vector<std::pair<GemmKey, BestTime>> out;
  auto s = (*stmt)->ForEachRow("reading every answer", [&](const Statement& row) {
    GemmKey key = ReadKey(row);
    if (!out.empty() && out.back().first == key) return;  // an older software version
    out.emplace_back(key, ReadBestTime(row, row.Int("software_id")));
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::map<GemmKey, MeasurementRow>> SqliteStore::BestMeasurements(
    const std::string& gpu_model, std::span<const GemmKey> keys, const SoftwarePin& pin,
    const MeasureMode& mode) {
  auto times = BestTimes(gpu_model, keys, pin, mode);
  if (!times.ok()) return times.status();
  std::map<GemmKey, MeasurementRow> out;
  for (const auto& [key, t] : *times) {
    auto row = GetMeasurement(t.measurement_id);
    if (!row.ok()) return row.status();
    out.emplace(key, *std::move(row));
  }
  return out;
}

}  // namespace crest::store::internal
