// A finished job's runs packed by line (run_packs.h): a window read from
// its packs gives exactly what its rows give, the packs are what is read,
// a change to a run's rows drops its packs, and a pack that does not decode
// is not trusted.
#include "run_packs.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using internal::EncodePack;
using internal::PackedRow;
using internal::PackView;
using store_tests::Exec;
using store_tests::Gemm;
using store_tests::OpenOk;
using store_tests::QueryNumber;

constexpr int kLine = 24;  // d_ff values in the window

// A d_ff window as a sweep measures it: the up projection's N line (k =
// 4096), the down projection's K line (n = 4096), and one GEMM on no line.
std::vector<tuner::GemmShape> Window() {
  std::vector<tuner::GemmShape> gemms;
  for (int i = 0; i < kLine; ++i) {
    const int64_t dff = 10752 + 16 * i;
    gemms.push_back(Gemm(4096, dff, 4096));
    gemms.push_back(Gemm(4096, 4096, dff));
  }
  gemms.push_back(Gemm(2048, 1000, 3000));
  return gemms;
}

std::vector<GemmKey> KeysOf(const std::vector<tuner::GemmShape>& gemms) {
  std::vector<GemmKey> keys;
  for (const auto& g : gemms) keys.push_back(GemmKey::Of(g));
  return keys;
}

// What a run's read gives for each key, as text: "-" for none.
std::vector<std::string> Figures(Store& db, const RunKey& run, const std::vector<GemmKey>& keys) {
  auto found = db.RunBestsOf("H100-SXM", run, keys, store_tests::kDefaultMode);
  EXPECT_TRUE(found.ok()) << found.status();
  std::vector<std::string> out;
  if (!found.ok()) return out;
  for (const auto& b : *found) {
    out.push_back(!b ? "-"
                     : std::to_string(b->measurement_id) + " " + std::to_string(b->median_us) +
                           " [" + std::to_string(b->ci_low_us) + ", " +
                           std::to_string(b->ci_high_us) + "] " + std::to_string(b->started_us));
  }
  return out;
}

class RunPacks : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("p.db");
    db_ = OpenOk(path_);
    ASSERT_NE(db_, nullptr);
    run_ = Job("GPU-a", "node-a");
  }

  // A job on a device of its own measuring the window, the i-th GEMM at
  // 100 + i us; not yet finished.
  RunKey Job(const std::string& uuid, const std::string& host) {
    auto ids = db_->RegisterDevice(testing::FakeH100(uuid, host), testing::FakeSoftware());
    EXPECT_TRUE(ids.ok());
    JobRecord job;
    job.spec = "{\"name\":\"" + uuid + "\"}";
    job.backend = "cublaslt";
    job.target = uuid;
    auto created = db_->CreateJob(job);
    EXPECT_TRUE(created.ok());
    const RunKey run{created->id, ids->first, ids->second};
    for (size_t i = 0; i < gemms_.size(); ++i) Measure(run, gemms_[i], 100.0 + double(i));
    return run;
  }

  void Measure(const RunKey& run, const tuner::GemmShape& g, double us) {
    ASSERT_TRUE(db_->InsertMeasurement(run.job_id, run.device_id, run.software_id, "H100-SXM", 132,
                                       testing::FakeMeasurement(g, us, 2))
                    .ok());
  }

  void Finish(const RunKey& run) {
    ASSERT_TRUE(db_->UpdateJob(run.job_id, JobState::kDone, 1, 1, "").ok());
  }

  // How many packs `run` has.
  int64_t Packs(const RunKey& run) {
    return QueryNumber(path_,
                       "SELECT count(*) FROM run_packs JOIN run_ids ON id = run_id WHERE "
                       "job_id = " +
                           std::to_string(run.job_id));
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> db_;
  const std::vector<tuner::GemmShape> gemms_ = Window();
  const std::vector<GemmKey> keys_ = KeysOf(gemms_);
  RunKey run_;
};

TEST_F(RunPacks, AFinishedJobsWindowReadsFromItsPacksWhatItsRowsGive) {
  const std::vector<std::string> from_rows = Figures(*db_, run_, keys_);
  EXPECT_EQ(Packs(run_), 0) << "a job still running is packed";
  Finish(run_);
  EXPECT_EQ(Packs(run_), 2) << "the window's two lines";
  EXPECT_EQ(Figures(*db_, run_, keys_), from_rows);
  // A narrower window, with GEMMs the run never measured at its ends and
  // between its own: each key answers as its rows do.
  std::vector<GemmKey> narrower;
  std::vector<std::string> expected;
  for (size_t i = 1; i < keys_.size(); i += 3) {
    narrower.push_back(keys_[i]);
    expected.push_back(from_rows[i]);
  }
  for (int64_t dff : {10744, 10760, 11200}) {
    narrower.push_back(GemmKey::Of(Gemm(4096, 4096, dff)));
    narrower.push_back(GemmKey::Of(Gemm(4096, dff, 4096)));
    expected.insert(expected.end(), {"-", "-"});
  }
  EXPECT_EQ(Figures(*db_, run_, narrower), expected);
}

TEST_F(RunPacks, AnswersReadThePackAndTheRowsWhereAPackDoesNotDecode) {
  Finish(run_);
  const std::vector<std::string> from_rows = Figures(*db_, run_, keys_);
  // The K line's pack rewritten with every median at 1 us: the answers
  // read it, and the N line's keys still answer from theirs.
  std::vector<PackedRow> rewritten;
  for (int i = 0; i < kLine; ++i) {
    rewritten.push_back({10752 + 16 * i, 7, 1.0, 0.5, 1.5});
  }
  std::string hex;
  for (uint8_t byte : EncodePack(rewritten)) {
    constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  const auto set_k_line = [&](const std::string& blob) {
    return Exec(path_, "UPDATE run_packs SET rows = " + blob + " WHERE varying = 2");
  };
  ASSERT_EQ(set_k_line("x'" + hex + "'"), "");
  auto found = db_->RunBestsOf("H100-SXM", run_, keys_, store_tests::kDefaultMode);
  ASSERT_TRUE(found.ok());
  for (size_t i = 0; i + 1 < keys_.size(); ++i) {
    ASSERT_TRUE((*found)[i]);
    if (keys_[i].n == 4096) {  // the down projection: the K line
      EXPECT_EQ((*found)[i]->median_us, 1.0) << i;
      EXPECT_EQ((*found)[i]->measurement_id, 7) << i;
    } else {
      EXPECT_EQ((*found)[i]->median_us, 100.0 + double(i)) << i;
    }
  }
  // Not whole rows, then rows out of order: not a pack; the rows answer.
  ASSERT_EQ(set_k_line("substr(rows, 1, 39)"), "");
  EXPECT_EQ(Figures(*db_, run_, keys_), from_rows);
  ASSERT_EQ(set_k_line("x'" + std::string(hex.size(), '0') + "'"), "");
  EXPECT_EQ(Figures(*db_, run_, keys_), from_rows) << "every v 0: not ascending";
}

TEST_F(RunPacks, AChangeToARunsRowsDropsItsPacksUntilItsJobIsDoneAgain) {
  const RunKey other = Job("GPU-b", "node-b");
  Finish(run_);
  Finish(other);
  ASSERT_EQ(Packs(run_), 2);
  ASSERT_EQ(Packs(other), 2);
  // The job resumed: a faster row of a K line GEMM.
  const size_t down = 1;
  ASSERT_EQ(keys_[down].n, 4096);
  Measure(run_, gemms_[down], 50);
  EXPECT_EQ(Packs(run_), 0) << "a new row left the run's packs";
  EXPECT_EQ(Packs(other), 2) << "another run's packs went";
  auto found = db_->RunBestsOf("H100-SXM", run_, keys_, store_tests::kDefaultMode);
  ASSERT_TRUE(found.ok() && (*found)[down]);
  EXPECT_EQ((*found)[down]->median_us, 50);
  Finish(run_);
  EXPECT_EQ(Packs(run_), 2);
  found = db_->RunBestsOf("H100-SXM", run_, keys_, store_tests::kDefaultMode);
  ASSERT_TRUE(found.ok() && (*found)[down]);
  EXPECT_EQ((*found)[down]->median_us, 50) << "packed again with the faster row";
  // A person deletes those rows with sqlite3: the run's best of the
  // GEMM is its earlier row again, packs or not.
  ASSERT_EQ(Exec(path_, "DELETE FROM measurements WHERE median_us < 100"), "");
  EXPECT_EQ(Packs(run_), 0) << "a deleted row left the run's packs";
  found = db_->RunBestsOf("H100-SXM", run_, keys_, store_tests::kDefaultMode);
  ASSERT_TRUE(found.ok() && (*found)[down]);
  EXPECT_EQ((*found)[down]->median_us, 100.0 + double(down));
}

// A fleet's catalogue is merged, and a nightly database upgraded from
// before packs: both pack the finished jobs' runs they hold.
TEST_F(RunPacks, AMergeAndAnUpgradePackTheRunsOfFinishedJobs) {
  Finish(run_);
  Job("GPU-b", "node-b");  // never finished
  const std::vector<std::string> from_rows = Figures(*db_, run_, keys_);
  const std::string snapshot = dir_.File("snapshot.db");
  ASSERT_TRUE(ExportTo(*db_, snapshot).ok());
  ASSERT_EQ(Exec(snapshot, "DELETE FROM run_packs"), "");

  auto fleet = OpenOk(dir_.File("fleet.db"));
  ASSERT_TRUE(MergeFrom(*fleet, snapshot).ok());
  EXPECT_EQ(QueryNumber(dir_.File("fleet.db"), "SELECT count(*) FROM run_packs"), 2)
      << "the finished job's two lines, and nothing of the running job";
  auto runs = fleet->ListRuns("H100-SXM", run_.software_id, store_tests::kDefaultMode);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  std::vector<std::vector<std::string>> packed;
  for (const RunBest& r : *runs) packed.push_back(Figures(*fleet, r.run, keys_));
  ASSERT_EQ(Exec(dir_.File("fleet.db"), "DELETE FROM run_packs"), "");
  for (size_t i = 0; i < runs->size(); ++i) {
    EXPECT_EQ(Figures(*fleet, (*runs)[i].run, keys_), packed[i]) << "run " << i;
  }
  fleet.reset();

  // The snapshot taken back to version 15, as it wrote files.
  ASSERT_EQ(Exec(snapshot,
                 "DROP TRIGGER run_rows_inserted; DROP TRIGGER run_rows_deleted; "
                 "DROP TRIGGER run_rows_updated; DROP TABLE run_packs; PRAGMA user_version = 15;"),
            "");
  auto upgraded = OpenOk(snapshot);
  ASSERT_NE(upgraded, nullptr);
  EXPECT_EQ(QueryNumber(snapshot, "SELECT count(*) FROM run_packs"), 2);
  EXPECT_EQ(Figures(*upgraded, run_, keys_), from_rows);
}

TEST(RunPackBytes, RowsAreLittleEndianReadInPlaceAndOnlyInAscendingOrder) {
  const std::vector<PackedRow> rows = {{0x0807060504030201, -3, 1.5, -0.0, 1e300},
                                       {0x0807060504030202, 1, 2.0, 1.0, 3.0},
                                       {0x0807060504030210, 2, 4.0, 3.0, 5.0}};
  const std::vector<uint8_t> bytes = EncodePack(rows);
  ASSERT_EQ(bytes.size(), 120u);
  EXPECT_EQ(bytes[0], 0x01);
  EXPECT_EQ(bytes[7], 0x08);
  auto pack = PackView::Of(bytes);
  ASSERT_TRUE(pack);
  ASSERT_EQ(pack->size(), 3u);
  const PackedRow first = pack->Row(0);
  EXPECT_EQ(first.v, rows[0].v);
  EXPECT_EQ(first.measurement_id, -3);
  EXPECT_EQ(first.median_us, 1.5);
  EXPECT_TRUE(std::signbit(first.ci_low_us));
  EXPECT_EQ(first.ci_high_us, 1e300);
  EXPECT_EQ(pack->Row(2).ci_high_us, 5.0);
  EXPECT_EQ(pack->LowerBound(0), 0u);
  EXPECT_EQ(pack->LowerBound(rows[1].v), 1u);
  EXPECT_EQ(pack->LowerBound(rows[1].v + 1), 2u);
  EXPECT_EQ(pack->LowerBound(rows[2].v + 1), 3u);
  const std::span<const uint8_t> all(bytes);
  EXPECT_FALSE(PackView::Of(all.first(79))) << "not whole rows";
  const std::vector<PackedRow> descending = {rows[1], rows[0]}, twice = {rows[0], rows[0]};
  EXPECT_FALSE(PackView::Of(EncodePack(descending))) << "descending";
  EXPECT_FALSE(PackView::Of(EncodePack(twice))) << "a value twice";
  ASSERT_TRUE(PackView::Of({}));
  EXPECT_EQ(PackView::Of({})->size(), 0u);
}

}  // namespace
}  // namespace crest::store
