// A fleet's slow GPUs: replayed runs of the shipped H100 MLP table, one per
// simulated device, set against each other — equal devices at the replay's
// 2% noise give no device slower; a device whose whole table is 10% slower
// (a throttled GPU) is named with the ratio, and only it; a device with a
// few slowed GEMMs is not called slow, but those GEMMs are listed.
#include "crest/answers/fleet_health.h"

#include "gtest/gtest.h"
#include "replay_tables.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::answers {
namespace {

using crest::testing::kMlpTable;
using crest::testing::kReplayWindowGemms;
using crest::testing::OpenSweepDb;
using crest::testing::ReplayWindow;
using crest::testing::Spec;
using crest::testing::TempDir;
using crest::testing::WriteScaledMlpTable;

const FleetDevice* Find(const FleetHealth& h, const std::string& uuid) {
  for (const FleetDevice& d : h.devices) {
    if (d.uuid == uuid) return &d;
  }
  return nullptr;
}

TEST(FleetHealth, EqualDevicesAtTwoPercentNoiseGiveNoSlowDevice) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  for (uint64_t seed = 1; seed <= 6; ++seed) ReplayWindow(*db, kMlpTable, seed);
  auto h = CheckFleet(*db, {});
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->groups.size(), 1u);
  EXPECT_EQ(h->groups[0].devices, 6);
  EXPECT_EQ(h->groups[0].gemms, kReplayWindowGemms);
  EXPECT_TRUE(h->replayed);
  ASSERT_EQ(h->devices.size(), 6u);
  for (const FleetDevice& d : h->devices) {
    EXPECT_EQ(d.gemms, kReplayWindowGemms);
    EXPECT_EQ(d.verdict, Verdict::kSame) << d.uuid << " median ratio " << d.ratio << " ("
                                         << d.ratio_low << "-" << d.ratio_high << ")";
    EXPECT_GE(d.coverage, 1 - 0.05 / 6) << "Bonferroni over the group's devices";
    EXPECT_LE(d.ratio_low, d.ratio);
    EXPECT_GE(d.ratio_high, d.ratio);
  }
  EXPECT_NE(SummarizeFleet(*h)[0].find("0 of 6 devices slower"), std::string::npos)
      << SummarizeFleet(*h)[0];
}

TEST(FleetHealth, AThrottledDeviceIsNamedWithItsRatioAndNoOther) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  for (uint64_t seed = 1; seed <= 4; ++seed) ReplayWindow(*db, kMlpTable, seed);
  const std::string throttled = dir.File("throttled.csv");
  WriteScaledMlpTable(throttled, [](const std::vector<std::string>&) { return 1.10; });
  const std::string slow = ReplayWindow(*db, throttled, 5);
  auto h = CheckFleet(*db, {});
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->devices.size(), 5u);
  EXPECT_EQ(h->devices.front().uuid, slow) << "slowest first";
  const FleetDevice& d = h->devices.front();
  EXPECT_EQ(d.verdict, Verdict::kSlower);
  EXPECT_NEAR(d.ratio, 1.10, 0.02);
  EXPECT_GT(d.ratio_low, 1.0);
  EXPECT_GT(d.slower, kReplayWindowGemms / 2) << "most of its GEMMs beyond the noise";
  EXPECT_EQ(d.slowest.size(), 5u);
  for (size_t i = 1; i < h->devices.size(); ++i) {
    EXPECT_NE(h->devices[i].verdict, Verdict::kSlower) << h->devices[i].uuid;
  }
  const auto lines = SummarizeFleet(*h);
  EXPECT_NE(lines[0].find("1 of 5 devices slower"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(slow), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("against the fleet's"), std::string::npos) << lines[2];
}

TEST(FleetHealth, AFewSlowedGemmsAreListedButDoNotMakeTheDeviceSlow) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  for (uint64_t seed = 1; seed <= 4; ++seed) ReplayWindow(*db, kMlpTable, seed);
  const std::string faulty = dir.File("faulty.csv");
  // The window's 8 down GEMMs at multiples of 16, 20% slower.
  WriteScaledMlpTable(faulty, [](const std::vector<std::string>& cells) {
    return cells[0].starts_with("down_") && std::stoll(cells[4]) % 16 == 0 ? 1.20 : 1.0;
  });
  const std::string uuid = ReplayWindow(*db, faulty, 5);
  auto h = CheckFleet(*db, {});
  ASSERT_TRUE(h.ok()) << h.status();
  const FleetDevice* d = Find(*h, uuid);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->verdict, Verdict::kSlower) << "its typical GEMM is as fast as the fleet's";
  EXPECT_GE(d->slower, 6) << "most of the 8 slowed GEMMs judged slower";
  EXPECT_LE(d->slower, 8) << "and no others";
  ASSERT_FALSE(d->slowest.empty());
  EXPECT_EQ(d->slowest.front().key.k % 16, 0);
}

TEST(FleetHealth, TooFewDevicesOrAnswersAndBadInputsAreSaid) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  ReplayWindow(*db, kMlpTable, 1);
  ReplayWindow(*db, kMlpTable, 2);
  auto h = CheckFleet(*db, {});
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->devices.size(), 2u);
  for (const FleetDevice& d : h->devices) {
    EXPECT_EQ(d.gemms, 0) << "two devices are no fleet";
    EXPECT_EQ(d.verdict, Verdict::kUnresolved);
  }
  EXPECT_NE(SummarizeFleet(*h)[0].find("2 without a fleet"), std::string::npos);
  FleetQuery q;
  q.max_answers = 100;
  EXPECT_EQ(CheckFleet(*db, q).status().code(), absl::StatusCode::kResourceExhausted);
  q = {};
  q.threshold = 2;
  EXPECT_EQ(CheckFleet(*db, q).status().code(), absl::StatusCode::kInvalidArgument);
  q = {};
  q.family_error = 0;
  EXPECT_EQ(CheckFleet(*db, q).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace crest::answers
