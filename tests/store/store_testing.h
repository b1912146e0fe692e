// Helpers shared by the store's tests (one test binary, several files).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "crest/store/store.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "gtest/gtest.h"

namespace crest::store_tests {

// Cold L2 and sustained clocks: the engine's default and what lookups read.
inline constexpr MeasureMode kDefaultMode{};

// Sets the file's user_version (the schema version the store reads).
inline void SetUserVersion(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, ("PRAGMA user_version=" + std::to_string(version)).c_str(), nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
}

// The model's prediction of `g` on an H100, stored.
inline absl::Status AddPrediction(store::Store& db, const GemmShape& g) {
  auto p = Predict(g, **FindGpu("h100"));
  if (!p.ok()) return p.status();
  return db.InsertPrediction(std::nullopt, "H100-SXM", g, *p).status();
}

// A forward GEMM named as the store tests name theirs.
inline GemmShape Gemm(int64_t m, int64_t n, int64_t k) {
  GemmShape g;
  g.name = "test.fwd";
  g.m = m;
  g.n = n;
  g.k = k;
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

// SQL taking a database at the current schema back to 9 as version 9 wrote
// it (no replay devices, no races, no heuristic ranks), for the tests of
// upgrades from older versions.
inline constexpr const char* kDowngradeTo9 = R"sql(
    DROP INDEX run_bests_by_run;
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
