// Test support: databases and replayed runs as the sweep and answer tests
// write them; specs from spec_testing.h (d_ff queries: dff_testing.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "crest/store/store.h"
#include "crest/sweep/backend_factory.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "dff_testing.h"
#include "gtest/gtest.h"
#include "spec_testing.h"
#include "temp_dir.h"

namespace crest::testing {

// The sweep tests' database: s.db in `dir`, host node0, no fsync per commit.
inline std::unique_ptr<store::Store> OpenSweepDb(const TempDir& dir) {
  store::StoreOptions options;
  options.host = "node0";
  options.synchronous_full = false;
  auto db = store::Store::Open(dir.File("s.db"), options);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// The window the replayed-run tests sweep: h 4096, d_ff ±64, no race; and
// its GEMMs (two a candidate).
inline constexpr char kReplayWindowSpec[] =
    R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": 64}], "measure": {"race": {"enabled": false}}})";
inline constexpr int64_t kReplayWindowGemms = 2 * (2 * 64 + 1);

// A replayed run of `spec` from the recorded `table` on an H100 of its own
// (the replay device's UUID follows the table and the noise's seed): that
// UUID. Every GEMM of the spec must be done.
inline std::string ReplayDevice(store::Store& db, const std::string& spec, const std::string& table,
                                uint64_t seed) {
  sweep::BackendChoice choice;
  choice.name = "replay";
  choice.gpu = "h100";
  choice.replay.file = table;
  choice.replay.seed = seed;
  auto backend = sweep::MakeBackend(choice);
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!backend.ok()) return "";
  auto out = sweep::RunSweep(Spec(spec), **backend, db, {});
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) {
    EXPECT_EQ(out->progress.done, out->progress.total);
  }
  return (*backend)->Device().uuid;
}

// A replayed run of kReplayWindowSpec from `table`: its device's UUID.
inline std::string ReplayWindow(store::Store& db, const std::string& table, uint64_t seed) {
  return ReplayDevice(db, kReplayWindowSpec, table, seed);
}

}  // namespace crest::testing
