// Helpers shared by the store's tests (one test binary, several files).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "crest/store/store.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "gemm_testing.h"
#include "gtest/gtest.h"

namespace crest::store_tests {

// Cold L2 and sustained clocks: the engine's default and what lookups read.
inline constexpr tuner::MeasureMode kDefaultMode{};

// Sets the file's user_version (the schema version the store reads).
inline void SetUserVersion(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, ("PRAGMA user_version=" + std::to_string(version)).c_str(), nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
}

// Runs `sql` on the file at `path` through its own connection: "" when it
// succeeded, else SQLite's message.
inline std::string Exec(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) return "cannot open " + path;
  const std::string error = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK
                                ? ""
                                : sqlite3_errmsg(raw);
  sqlite3_close(raw);
  return error;
}

// The first column of the first row `sql` gives on the file at `path`, as
// an integer; -1 when it gives none.
inline int64_t QueryNumber(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  int64_t value = -1;
  if (sqlite3_open(path.c_str(), &raw) == SQLITE_OK) {
    sqlite3_exec(
        raw, sql.c_str(),
        [](void* out, int, char** values, char**) {
          *static_cast<int64_t*>(out) = values[0] != nullptr ? std::atoll(values[0]) : -1;
          return 1;  // the first row is enough
        },
        &value, nullptr);
  }
  sqlite3_close(raw);
  return value;
}

// The model's prediction of `g` on an H100, stored.
inline absl::Status AddPrediction(store::Store& db, const tuner::GemmShape& g) {
  auto p = tuner::Predict(g, **tuner::FindGpu("h100"));
  if (!p.ok()) return p.status();
  return db.InsertPrediction(std::nullopt, "H100-SXM", g, *p).status();
}

// A forward GEMM named as the store tests name theirs.
inline tuner::GemmShape Gemm(int64_t m, int64_t n, int64_t k) {
  tuner::GemmShape g = testing::Gemm(m, n, k);
  g.name = "test.fwd";
  return g;
}

// Opens `path` (host "node0" unless the options name one); a failure fails
// the test and gives nullptr.
inline std::unique_ptr<store::Store> OpenOk(const std::string& path,
                                            store::StoreOptions options = {}) {
  options.host = options.host.empty() ? "node0" : options.host;
  auto db = store::Store::Open(path, options);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// A model-backend job of an empty d_ff spec on the H100.
inline store::JobRecord EmptyDffJob() {
  store::JobRecord job;
  job.spec = R"({"dff":[]})";
  job.backend = "model";
  job.target = "H100-SXM";
  return job;
}

// The newest run's fastest verified row of `key` on `gpu_model` in `mode`
// (NewestRunBests, then the row itself); nullopt when no run measured it.
inline absl::StatusOr<std::optional<store::MeasurementRow>> NewestRow(
    store::Store& db, const std::string& gpu_model, const store::GemmKey& key,
    const tuner::MeasureMode& mode = kDefaultMode, std::optional<int64_t> cublaslt = std::nullopt) {
  store::RunFilter filter;
  filter.gpu_model = gpu_model;
  filter.cublaslt = cublaslt;
  filter.mode = mode;
  auto best = db.NewestRunBests(filter);
  if (!best.ok()) return best.status();
  for (const store::SelectedBest& b : *best) {
    if (b.key == key) return db.GetMeasurement(b.best.measurement_id);
  }
  return std::nullopt;
}

// SQL taking a database at the current schema back to 9 as version 9 wrote
// it (no run packs, no replay devices, no races, no heuristic ranks; the first answer
// rule's tables, left empty: the upgrade to 14 drops them unread), for the
// tests of upgrades from older versions.
inline constexpr const char* kDowngradeTo9 = R"sql(
    CREATE TABLE best_measurements(
      gpu_model TEXT NOT NULL, cache_mode TEXT NOT NULL, clock_policy TEXT NOT NULL,
      software_id INTEGER NOT NULL, dtype TEXT NOT NULL, trans_a INTEGER NOT NULL,
      trans_b INTEGER NOT NULL, batch INTEGER NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
      k INTEGER NOT NULL, device_id INTEGER NOT NULL, measurement_id INTEGER NOT NULL,
      median_us REAL NOT NULL,
      PRIMARY KEY(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b,
                  batch, m, n, k, device_id)) WITHOUT ROWID;
    CREATE TABLE best_answers(
      gpu_model TEXT NOT NULL, cache_mode TEXT NOT NULL, clock_policy TEXT NOT NULL,
      software_id INTEGER NOT NULL, dtype TEXT NOT NULL, trans_a INTEGER NOT NULL,
      trans_b INTEGER NOT NULL, batch INTEGER NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
      k INTEGER NOT NULL, device_id INTEGER NOT NULL, measurement_id INTEGER NOT NULL,
      median_us REAL NOT NULL, ci_low_us REAL NOT NULL, ci_high_us REAL NOT NULL,
      devices INTEGER NOT NULL,
      PRIMARY KEY(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b,
                  batch, m, n, k)) WITHOUT ROWID;
    DROP TABLE run_packs;
    DROP TRIGGER run_bests_inserted;
    DROP TRIGGER run_bests_deleted;
    DROP TRIGGER run_bests_updated;
    DROP TABLE run_rows;
    DROP TABLE run_ids;
    ALTER TABLE devices DROP COLUMN replay;
    DROP TRIGGER races_move_generation;
    DROP TRIGGER races_deleted;
    ALTER TABLE generations DROP COLUMN race_id;
    DROP INDEX races_by_job;
    DROP TABLE race_times;
    DROP TABLE race_entries;
    DROP TABLE races;
    ALTER TABLE measurements DROP COLUMN heuristic_rank;)sql";

}  // namespace crest::store_tests
