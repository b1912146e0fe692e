// A measurement's columns are declared once (store/src/measurement_columns):
// the table covers every column the schema has, and a row written with every
// field set reads back whole, here and after a merge.
#include "measurement_columns.h"

#include <sqlite3.h>

#include <set>
#include <string>

#include "crest/store/admin.h"
#include "device_columns.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "imported_columns.h"
#include "job_columns.h"
#include "key_columns.h"
#include "prediction_columns.h"
#include "race_columns.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::Gemm;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

// The columns a fresh database's `table` has, as SQLite lists them.
std::set<std::string> SchemaColumns(const std::string& table) {
  TempDir dir;
  const std::string path = dir.File("schema.db");
  OpenOk(path);
  sqlite3* raw = nullptr;
  std::set<std::string> names;
  if (sqlite3_open(path.c_str(), &raw) == SQLITE_OK) {
    const std::string sql = "SELECT name FROM pragma_table_info('" + table + "')";
    sqlite3_exec(
        raw, sql.c_str(),
        [](void* out, int, char** values, char**) {
          static_cast<std::set<std::string>*>(out)->insert(values[0]);
          return 0;
        },
        &names, nullptr);
  }
  sqlite3_close(raw);
  return names;
}

// The names of a column list ("a, b, c").
std::set<std::string> Names(const std::string& list) {
  std::set<std::string> names;
  for (size_t at = 0; at != std::string::npos;) {
    const size_t comma = list.find(", ", at);
    names.insert(list.substr(at, comma == std::string::npos ? comma : comma - at));
    at = comma == std::string::npos ? comma : comma + 2;
  }
  return names;
}

// The names a column table declares.
template <typename Columns>
std::set<std::string> Declared(const Columns& columns) {
  std::set<std::string> names;
  for (const auto& c : columns) names.insert(std::string(c.name));
  return names;
}

TEST(MeasurementColumns, TheTableDeclaresEveryValueColumnTheSchemaHas) {
  std::set<std::string> schema = SchemaColumns("measurements");
  // Ids, references, the GPU model and the GemmKey are bound apart.
  for (const char* apart : {"id", "uid", "job_id", "device_id", "software_id", "gpu_model", "dtype",
                            "trans_a", "trans_b", "batch", "m", "n", "k"}) {
    EXPECT_EQ(schema.erase(apart), 1u) << apart;
  }
  EXPECT_EQ(Declared(internal::MeasurementColumns()), schema)
      << "a column the schema has and the table lacks, or the reverse";
}

TEST(KeyColumns, TheKeyListNamesTheSevenKeyColumnsEveryResultTableHas) {
  EXPECT_EQ(internal::KeyColumnList("sm."),
            "sm.dtype, sm.trans_a, sm.trans_b, sm.batch, sm.m, sm.n, sm.k");
  const std::set<std::string> listed = Names(internal::KeyColumnList());
  ASSERT_EQ(listed.size(), 7u);
  for (const char* table : {"measurements", "run_bests", "predictions", "imported"}) {
    // Each has the seven (measurements and predictions gained batch last).
    const std::set<std::string> schema = SchemaColumns(table);
    for (const std::string& name : listed)
      EXPECT_TRUE(schema.contains(name)) << table << " " << name;
  }
}

TEST(ImportedColumns, TheListNamesEveryColumnTheSchemaHasButTheId) {
  std::set<std::string> schema = SchemaColumns("imported");
  EXPECT_EQ(schema.erase("id"), 1u);
  EXPECT_EQ(Names(internal::ImportedColumnList()), schema);
}

TEST(PredictionColumns, TheListNamesEveryColumnTheSchemaHasButTheIdAndTheJob) {
  std::set<std::string> schema = SchemaColumns("predictions");
  EXPECT_EQ(schema.erase("id"), 1u);
  EXPECT_EQ(schema.erase("job_id"), 1u);
  EXPECT_EQ(Names(internal::PredictionColumnList()), schema);
  EXPECT_TRUE(internal::PredictionColumnList("sp.").starts_with("sp.uid, sp.host, "));
}

TEST(RaceColumns, TheListsNameEveryColumnOfARaceAndAStandingButIdsAndReferences) {
  std::set<std::string> races = SchemaColumns("races");
  for (const char* apart : {"id", "uid", "job_id", "device_id", "software_id"}) {
    EXPECT_EQ(races.erase(apart), 1u) << apart;
  }
  EXPECT_EQ(Names(internal::RaceColumnList()), races);
  std::set<std::string> entries = SchemaColumns("race_entries");
  EXPECT_EQ(entries.erase("race_id"), 1u);
  EXPECT_EQ(Names(internal::RaceEntryColumnList()), entries);
}

TEST(JobColumns, TheTableDeclaresEveryColumnTheSchemaHas) {
  EXPECT_EQ(Declared(internal::JobColumns()), SchemaColumns("jobs"))
      << "a column the schema has and the table lacks, or the reverse";
  EXPECT_TRUE(internal::JobColumnList(false, false).starts_with("uid, host, '' AS spec, backend"));
  EXPECT_NE(internal::JobColumnList(true, false).find("'' AS spec"), std::string::npos);
}

TEST(JobColumns, EveryFieldReadsBackAsWrittenAndAfterAMerge) {
  TempDir dir;
  auto db = OpenOk(dir.File("node.db"));
  JobRecord in;
  in.spec = R"({"version":1})";
  in.backend = "model";
  in.target = "H100-SXM";
  in.total = 12;
  in.priority = 3;
  in.submitted_by = "alice";
  auto job = db->CreateJob(in);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(db->UpdateJob(job->id, JobState::kRunning, 12, 0, "").ok());
  ASSERT_TRUE(db->UpdateJob(job->id, JobState::kFailed, 12, 5, "out of time").ok());
  const auto same = [](const JobRecord& a, const JobRecord& b) {
    EXPECT_EQ(a.uid, b.uid);
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.spec, b.spec);
    EXPECT_EQ(a.submitted_by, "alice");
    EXPECT_EQ(a.submitted_by, b.submitted_by);
    EXPECT_EQ(a.backend, b.backend);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.state, JobState::kFailed);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.total, b.total);
    EXPECT_EQ(a.done, 5);
    EXPECT_EQ(a.done, b.done);
    EXPECT_EQ(a.priority, 3);
    EXPECT_EQ(a.priority, b.priority);
    EXPECT_EQ(a.created_us, b.created_us);
    EXPECT_TRUE(a.started_us.has_value() && a.finished_us.has_value());
    EXPECT_EQ(a.started_us, b.started_us);
    EXPECT_EQ(a.finished_us, b.finished_us);
    EXPECT_EQ(a.error, "out of time");
    EXPECT_EQ(a.error, b.error);
  };
  auto read = db->GetJob(job->id);
  ASSERT_TRUE(read.ok());
  const std::string snapshot = dir.File("snap.db");
  ASSERT_TRUE(store::ExportTo(*db, snapshot).ok());
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  ASSERT_EQ(store::MergeFrom(*catalogue, snapshot)->jobs, 1);
  Store::JobListing all;
  all.with_spec = true;
  auto merged = catalogue->ListJobs(all);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->size(), 1u);
  same(*read, merged->front());
  Store::JobListing listing;  // without the spec's text
  EXPECT_EQ(catalogue->ListJobs(listing)->front().spec, "");
}

TEST(DeviceColumns, TheTableDeclaresEveryColumnTheSchemaHasButTheId) {
  std::set<std::string> schema = SchemaColumns("devices");
  EXPECT_EQ(schema.erase("id"), 1u);
  EXPECT_EQ(Declared(internal::DeviceColumns()), schema)
      << "a column the schema has and the table lacks, or the reverse";
  for (const auto& c : internal::DeviceColumns()) {
    EXPECT_EQ(c.joined, "device_" + std::string(c.name));
  }
}

TEST(DeviceColumns, EveryFieldReadsBackAsRegisteredAndAfterAMerge) {
  TempDir dir;
  auto db = OpenOk(dir.File("node.db"));
  tuner::DeviceInfo in = crest::testing::FakeH100("GPU-every-field", "node-7");
  in.replay = "replay of h100.csv (sha256 0f1e), noise 0.5%, seed 7, drift 0";
  auto ids = db->RegisterDevice(in, crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                    crest::testing::FakeMeasurement(Gemm(4096, 4096, 4096), 500))
                  .ok());
  const auto same = [&](const tuner::DeviceInfo& d) {
    EXPECT_EQ(d.uuid, in.uuid);
    EXPECT_EQ(d.host, in.host);
    EXPECT_EQ(d.name, in.name);
    EXPECT_EQ(d.gpu_model, in.gpu_model);
    EXPECT_EQ(d.sm_count, in.sm_count);
    EXPECT_EQ(d.cc_major, in.cc_major);
    EXPECT_EQ(d.cc_minor, in.cc_minor);
    EXPECT_EQ(d.l2_bytes, in.l2_bytes);
    EXPECT_EQ(d.memory_bytes, in.memory_bytes);
    EXPECT_EQ(d.sm_clock_mhz, in.sm_clock_mhz);
    EXPECT_EQ(d.memory_clock_mhz, in.memory_clock_mhz);
    EXPECT_EQ(d.replay, in.replay);
  };
  auto row = db->GetMeasurement(1);
  ASSERT_TRUE(row.ok()) << row.status();
  same(row->device);
  ASSERT_TRUE(store::ExportTo(*db, dir.File("snap.db")).ok());
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  ASSERT_EQ(store::MergeFrom(*catalogue, dir.File("snap.db"))->devices, 1);
  auto merged = catalogue->GetMeasurement(1);
  ASSERT_TRUE(merged.ok()) << merged.status();
  same(merged->device);
}

TEST(MeasurementColumns, EveryFieldReadsBackAsWrittenAndAfterAMerge) {
  TempDir dir;
  auto db = OpenOk(dir.File("node.db"));
  auto ids = db->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  tuner::MeasuredGemm mg = crest::testing::FakeMeasurement(Gemm(4096, 8192, 2048), 500, 1);
  mg.lda = 2048;
  mg.ldb = 2048;
  mg.ldc = 8192;
  mg.compute_type = "fp32";
  mg.mode = {tuner::CacheMode::kWarm, tuner::ClockPolicy::kBurst};
  mg.settled_clock_mhz = 1755;
  tuner::AlgoResult& a = mg.algos[0];
  a.algo = {21, 18, 256, 128, 3, 2, 1, 4, 5, 6, {1, 2, 3, 250}};
  a.stats = {500, 501, 480, 7, 33, 495, 505, 1410, 690, 0x4, 2};
  a.verify_note = "";
  a.clock_note = "a note";
  a.tflops = 123.5;
  ASSERT_TRUE(
      db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132, mg).ok());
  const GemmKey key = GemmKey::Of(mg.gemm);
  const auto check = [&](Store& store, const char* where) {
    auto best = crest::store_tests::NewestRow(store, "H100-SXM", key, mg.mode);
    ASSERT_TRUE(best.ok() && best->has_value()) << where;
    const MeasurementRow& r = **best;
    EXPECT_EQ(r.lda, 2048) << where;
    EXPECT_EQ(r.ldc, 8192) << where;
    EXPECT_EQ(r.dtype_out, "bf16") << where;
    EXPECT_EQ(r.compute_type, "fp32") << where;
    EXPECT_EQ(r.mode, mg.mode) << where;
    EXPECT_EQ(r.settled_clock_mhz, 1755) << where;
    EXPECT_EQ(r.result.algo.algo_id, 21) << where;
    EXPECT_EQ(r.result.algo.cluster_shape, 6) << where;
    EXPECT_EQ(r.result.algo.bytes, (std::vector<uint8_t>{1, 2, 3, 250})) << where;
    EXPECT_EQ(r.result.stats.samples, 33) << where;
    EXPECT_EQ(r.result.stats.power_w, 690) << where;
    EXPECT_EQ(r.result.stats.throttle_reasons, 0x4u) << where;
    EXPECT_EQ(r.result.stats.discarded, 2) << where;
    EXPECT_EQ(r.result.clock_note, "a note") << where;
    EXPECT_EQ(r.result.tflops, 123.5) << where;
    EXPECT_TRUE(r.result.verified) << where;
    EXPECT_EQ(r.tiles, 16 * 64) << where << ": 4096x8192 in 256x128 tiles";
  };
  check(*db, "as written");
  const std::string snapshot = dir.File("node.snapshot");
  ASSERT_TRUE(store::ExportTo(*db, snapshot).ok());
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  ASSERT_TRUE(store::MergeFrom(*catalogue, snapshot).ok());
  check(*catalogue, "after a merge");
}

}  // namespace
}  // namespace crest::store
