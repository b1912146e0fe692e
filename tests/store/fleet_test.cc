// Many nodes' databases (fleet.cc): export, merge, and the catalogue's answers.

#include <map>
#include <set>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::AddPrediction;
using crest::store_tests::Gemm;
using crest::store_tests::kDefaultMode;
using crest::store_tests::OpenOk;
using crest::store_tests::SetUserVersion;
using crest::testing::ReadBytes;
using crest::testing::TempDir;
using crest::testing::WriteBytes;

TEST(StoreFleet, ExportWhileWritingThenMergeTwiceAddsNothingTheSecondTime) {
  TempDir dir;
  const tuner::GemmShape g = Gemm(4096, 4096, 4096);
  std::vector<std::string> snapshots;
  for (const char* host : {"node1", "node2"}) {
    StoreOptions options;
    options.host = host;
    auto db = OpenOk(dir.File(std::string(host) + ".db"), options);
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                  crest::testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    ASSERT_TRUE(
        db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                              crest::testing::FakeMeasurement(g, host[4] == '1' ? 900 : 950))
            .ok());
    ASSERT_TRUE(AddPrediction(*db, g).ok());
    // A second connection keeps writing while the export runs.
    auto writer = OpenOk(dir.File(std::string(host) + ".db"), options);
    ASSERT_TRUE(AddPrediction(*writer, Gemm(128, 128, 128)).ok());
    const std::string snapshot = dir.File(std::string(host) + ".snapshot");
    ASSERT_TRUE(store::ExportTo(*db, snapshot).ok());
    EXPECT_EQ(store::ExportTo(*db, snapshot).code(), absl::StatusCode::kAlreadyExists);
    snapshots.push_back(snapshot);
  }
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) {
    auto r = store::MergeFrom(*catalogue, snapshot);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->measurements, 3);
    EXPECT_EQ(r->devices, 1);
  }
  const auto before = ReadBytes(dir.File("catalogue.db"));
  for (const auto& snapshot : snapshots) {
    auto again = store::MergeFrom(*catalogue, snapshot);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(
        again->measurements + again->predictions + again->devices + again->jobs + again->software,
        0);
  }
  auto stats = store::Stats(*catalogue);
  EXPECT_EQ(stats->measurements, 6);
  EXPECT_EQ(stats->predictions, 2);  // identical predictions merge into one
  EXPECT_EQ(stats->devices, 2);
  EXPECT_EQ(stats->software, 1);
  const GemmKey key = GemmKey::Of(g);
  auto runs = catalogue->RunBests("H100-SXM", {&key, 1}, catalogue->SoftwareVersions({})->front(),
                                  kDefaultMode);
  ASSERT_TRUE(runs.ok()) << runs.status();
  std::multiset<double> medians;
  for (const RunBest& b : runs->at(key)) medians.insert(b.median_us);
  EXPECT_EQ(medians, (std::multiset<double>{900, 950})) << "each node's run kept apart";
  EXPECT_TRUE(store::Check(*catalogue)->ok);
}

// Each node's run stays its own in a catalogue, on its own software: an
// answer takes a GEMM from one run, never a figure mixed across nodes.
TEST(StoreFleet, ACatalogueKeepsEachNodesRunOnItsOwnSoftware) {
  TempDir dir;
  const tuner::GemmShape g = Gemm(8192, 4096, 11008);
  const GemmKey key = GemmKey::Of(g);
  auto catalogue = OpenOk(dir.File("catalogue.db"));
  struct Node {
    const char* host;
    double best_us;
    int64_t cublaslt;
  };
  const Node nodes[] = {{"node1", 900, 130100},
                        {"node2", 700, 130100},
                        {"node3", 1000, 130100},
                        {"node4", 100, 120900}};
  for (const Node& n : nodes) {
    StoreOptions options;
    options.host = n.host;
    auto db = OpenOk(dir.File(std::string(n.host) + ".db"), options);
    auto ids = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + n.host, n.host),
                                  crest::testing::FakeSoftware(n.cublaslt));
    ASSERT_TRUE(ids.ok());
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                      crest::testing::FakeMeasurement(g, n.best_us))
                    .ok());
    const std::string snapshot = dir.File(std::string(n.host) + ".snapshot");
    ASSERT_TRUE(store::ExportTo(*db, snapshot).ok());
    ASSERT_TRUE(store::MergeFrom(*catalogue, snapshot).ok());
  }
  const auto runs_on = [&](int64_t cublaslt) {
    SoftwarePin pin;
    pin.cublaslt = cublaslt;
    auto runs = catalogue->RunBests("H100-SXM", {&key, 1},
                                    catalogue->SoftwareVersions(pin)->front(), kDefaultMode);
    std::map<std::string, double> by_host;
    if (!runs.ok() || !runs->contains(key)) return by_host;
    auto described = [&] {
      std::vector<RunKey> keys;
      for (const RunBest& b : runs->at(key)) keys.push_back(b.run);
      return *catalogue->DescribeRuns(keys);
    }();
    for (size_t i = 0; i < described.size(); ++i) {
      by_host[described[i].device.host] = runs->at(key)[i].median_us;
    }
    return by_host;
  };
  EXPECT_EQ(runs_on(130100),
            (std::map<std::string, double>{{"node1", 900}, {"node2", 700}, {"node3", 1000}}));
  EXPECT_EQ(runs_on(120900), (std::map<std::string, double>{{"node4", 100}}))
      << "the older software's run is not mixed in";
}

TEST(StoreFleet, ARunsBestFollowsAFasterRemeasurementAndIgnoresASlowerOne) {
  TempDir dir;
  auto db = OpenOk(dir.File("m.db"));
  const tuner::GemmShape g = Gemm(2048, 2048, 2048);
  const GemmKey key = GemmKey::Of(g);
  std::vector<std::pair<int64_t, int64_t>> ids;
  for (const char* host : {"node1", "node2"}) {
    auto id = db->RegisterDevice(crest::testing::FakeH100(std::string("GPU-") + host, host),
                                 crest::testing::FakeSoftware());
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  auto measure = [&](size_t device, double us) {
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids[device].first, ids[device].second,
                                      "H100-SXM", 132, crest::testing::FakeMeasurement(g, us))
                    .ok());
  };
  // Rows written outside any job: one run per device and software.
  const auto best_of = [&](size_t device) {
    const RunKey run{0, ids[device].first, ids[device].second};
    auto best = db->RunBestsOf("H100-SXM", run, {&key, 1}, kDefaultMode);
    return best.ok() && best->front() ? best->front()->median_us : -1.0;
  };
  measure(0, 500);
  measure(1, 700);
  EXPECT_DOUBLE_EQ(best_of(1), 700);
  measure(1, 900);  // slower than node2's best: nothing moves
  EXPECT_DOUBLE_EQ(best_of(1), 700);
  measure(1, 400);  // faster: it is node2's run's best now
  EXPECT_DOUBLE_EQ(best_of(1), 400);
  EXPECT_DOUBLE_EQ(best_of(0), 500) << "another device's run is its own";
}

TEST(StoreFleet, MergeRefusesASnapshotOfANewerSchemaByItsOwnVersion) {
  TempDir dir;
  auto db = OpenOk(dir.File("catalogue.db"));
  auto node = OpenOk(dir.File("node.db"));
  ASSERT_TRUE(
      node->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware()).ok());
  ASSERT_TRUE(store::ExportTo(*node, dir.File("future.db")).ok());
  SetUserVersion(dir.File("future.db"), 99);
  auto merged = store::MergeFrom(*db, dir.File("future.db"));
  ASSERT_FALSE(merged.ok()) << "the catalogue's own version was read, not the snapshot's";
  EXPECT_NE(merged.status().message().find("future.db: newer schema version 99"), std::string::npos)
      << merged.status();
  EXPECT_EQ(store::Stats(*db)->devices, 0) << "nothing was merged";
}

TEST(StoreFleet, MergeRefusesWhatIsNotASnapshot) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  EXPECT_EQ(store::MergeFrom(*db, dir.File("missing.db")).status().code(),
            absl::StatusCode::kNotFound);
  WriteBytes(dir.File("junk.db"), std::string(5000, 'j'));
  auto r = store::MergeFrom(*db, dir.File("junk.db"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("junk.db"), std::string::npos) << r.status();
}

TEST(StoreFleet, MergeErrorsNameTheSnapshotAtFaultAndLeaveTheTargetByteIdentical) {
  TempDir dir;
  {
    auto node = OpenOk(dir.File("node.db"));
    ASSERT_TRUE(AddPrediction(*node, Gemm(4096, 4096, 4096)).ok());
    ASSERT_TRUE(store::ExportTo(*node, dir.File("good.db")).ok());
    ASSERT_TRUE(store::ExportTo(*node, dir.File("future.db")).ok());
  }
  SetUserVersion(dir.File("future.db"), 99);
  std::string bad = ReadBytes(dir.File("good.db"));
  ASSERT_GT(bad.size(), 4u * 4096);
  for (size_t i = 2 * 4096; i < bad.size(); ++i) bad[i] = static_cast<char>(0xff);
  WriteBytes(dir.File("corrupt.db"), bad);
  WriteBytes(dir.File("text.db"), "id,time\n1,2\n");
  auto db = OpenOk(dir.File("cat.db"));
  ASSERT_TRUE(AddPrediction(*db, Gemm(1024, 1024, 1024)).ok());
  db.reset();
  const std::string before = ReadBytes(dir.File("cat.db"));
  for (const char* name : {"text.db", "corrupt.db", "future.db"}) {
    auto target = OpenOk(dir.File("cat.db"));
    auto r = store::MergeFrom(*target, dir.File(name));
    ASSERT_FALSE(r.ok()) << name;
    const std::string message(r.status().message());
    EXPECT_EQ(message.find(dir.File(name)), 0u) << "the snapshot leads the message: " << message;
    EXPECT_EQ(message.find(dir.File("cat.db") + ":"), std::string::npos)
        << "the target is not blamed: " << message;
    target.reset();
    EXPECT_EQ(ReadBytes(dir.File("cat.db")), before) << name << " left the target as it was";
    auto check = store::Check(*OpenOk(dir.File("cat.db")));
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(check->ok);
  }
}

// The replay backend's simulated H100, as its runs are stored.
tuner::DeviceInfo ReplayedH100() {
  tuner::DeviceInfo d = crest::testing::FakeH100("REPLAY-0123456789abcdef");
  d.replay = "torch-mlp-h4096.csv (00ff), noise 0.02, seed 1, drift none";
  return d;
}

TEST(StoreFleet, ReplayedAndMeasuredRunsOfOneGpuModelAreKeptApartWhenRegisteredAndMerged) {
  TempDir dir;
  auto replayed = OpenOk(dir.File("replayed.db"));
  ASSERT_TRUE(replayed->RegisterDevice(ReplayedH100(), crest::testing::FakeSoftware(0)).ok());
  ASSERT_TRUE(replayed->RegisterDevice(ReplayedH100(), crest::testing::FakeSoftware(0)).ok())
      << "the same replay device again is not a mix";
  auto measured =
      replayed->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100));
  ASSERT_FALSE(measured.ok());
  EXPECT_EQ(measured.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(measured.status().message().find("holds replayed runs of H100-SXM"), std::string::npos)
      << measured.status();
  ASSERT_TRUE(store::ExportTo(*replayed, dir.File("replayed-snapshot.db")).ok());

  auto real = OpenOk(dir.File("real.db"));
  ASSERT_TRUE(
      real->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(130100)).ok());
  auto merged = store::MergeFrom(*real, dir.File("replayed-snapshot.db"));
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("replayed-snapshot.db"), std::string::npos)
      << merged.status();

  // Into a database of its own kind the merge carries the replay column.
  auto other = OpenOk(dir.File("other.db"));
  ASSERT_TRUE(store::MergeFrom(*other, dir.File("replayed-snapshot.db")).ok());
  auto again = other->RegisterDevice(crest::testing::FakeH100(), crest::testing::FakeSoftware(1));
  EXPECT_FALSE(again.ok()) << "the merged device is still a replay device";
}

}  // namespace
}  // namespace crest::store
