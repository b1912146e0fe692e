// crest compare's core: selectors, verdicts, and two replayed runs of the
// shipped H100 MLP table set side by side — equal tables at 2% noise give
// no verdict of slower or faster; a table with some GEMMs slowed by 10%
// gives exactly those as slower.
#include "crest/answers/compare.h"

#include <set>

#include "gtest/gtest.h"
#include "replay_tables.h"
#include "sweep_testing.h"
#include "temp_dir.h"

namespace crest::answers {
namespace {

using crest::testing::kReplayWindowGemms;
using crest::testing::OpenSweepDb;
using crest::testing::ReplayWindow;
using crest::testing::Spec;
using crest::testing::TempDir;

const std::string& kTable = crest::testing::kMlpTable;

// The shipped table with each down GEMM whose d_ff is a multiple of 16
// slowed by `factor`; their keys in `slowed`.
std::string SlowedTable(const TempDir& dir, double factor, std::set<store::GemmKey>* slowed) {
  const std::string path = dir.File("slowed.csv");
  crest::testing::WriteScaledMlpTable(path, [&](const std::vector<std::string>& cells) {
    const int64_t k = std::stoll(cells[4]);
    if (!cells[0].starts_with("down_") || k % 16 != 0) return 1.0;
    store::GemmKey key;
    key.m = std::stoll(cells[2]);
    key.n = std::stoll(cells[3]);
    key.k = k;
    slowed->insert(key);
    return factor;
  });
  return path;
}

TEST(CompareSelectors, ReadEachKindAndNameTheFlagAndPartAtFault) {
  auto f = ParseRunSelector("host:node7,cublaslt:130100,date:2026-11-01..2026-11-02", "--base");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->host, "node7");
  EXPECT_EQ(f->cublaslt, 130100);
  EXPECT_EQ(*f->to_us - *f->from_us, int64_t{2} * 86'400'000'000) << "both days, inclusive";
  EXPECT_EQ(ParseRunSelector("job:0", "--new")->job_id, 0);
  EXPECT_EQ(ParseRunSelector("gpu:h100", "--new")->gpu_model, "H100-SXM");
  EXPECT_TRUE(ParseRunSelector("all", "--new").ok());
  for (const char* bad : {"job:x", "job:-1", "colour:red", "node7", "date:2026-13-01",
                          "date:2026-02-30", "date:2026-11-05..2026-11-01", "gpu:nope", ""}) {
    auto r = ParseRunSelector(bad, "--base");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(r.status().message()).find("--base"), 0u) << r.status();
  }
}

TEST(CompareVerdicts, NeedTheThresholdAndAnIntervalPastOne) {
  EXPECT_EQ(Judge(1.10, 1.05, 1.15, 0.03), Verdict::kSlower);
  EXPECT_EQ(Judge(1.10, 0.99, 1.20, 0.03), Verdict::kUnresolved) << "within the noise";
  EXPECT_EQ(Judge(1.02, 1.01, 1.03, 0.03), Verdict::kSame) << "real but below the threshold";
  EXPECT_EQ(Judge(0.90, 0.85, 0.95, 0.03), Verdict::kFaster);
  EXPECT_EQ(Judge(0.90, 0.85, 1.01, 0.03), Verdict::kUnresolved);
  EXPECT_EQ(Judge(1.01, 0.95, 1.08, 0.03), Verdict::kUnresolved)
      << "not same: the noise could hide a change beyond the threshold";
}

TEST(Compare, EqualTablesAtTwoPercentNoiseGiveNoSlowerAndNoFaster) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  const std::string a = ReplayWindow(*db, kTable, 1);
  const std::string b = ReplayWindow(*db, kTable, 2);
  ASSERT_NE(a, b);
  CompareQuery q;
  q.base = "device:" + a;
  q.now = "device:" + b;
  auto r = Compare(*db, q);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->all.gemms, kReplayWindowGemms);
  EXPECT_EQ(r->all.slower, 0) << "a false alarm on equal tables";
  EXPECT_EQ(r->all.faster, 0);
  EXPECT_TRUE(r->replayed);
  ASSERT_EQ(r->base_runs.size(), 1u);
  EXPECT_NE(r->base_runs[0].find("REPLAYED"), std::string::npos) << r->base_runs[0];
  EXPECT_NEAR(r->all.geomean_ratio, 1, 0.01);
  for (const GemmComparison& c : r->gemms) {
    EXPECT_GE(c.coverage, 0.9) << "two 95% intervals";
    EXPECT_LE(c.ratio_low, c.ratio);
    EXPECT_GE(c.ratio_high, c.ratio);
  }
}

TEST(Compare, FindsTheSlowedGemmsAndNoOthers) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  std::set<store::GemmKey> slowed;
  const std::string a = ReplayWindow(*db, kTable, 1);
  const std::string b = ReplayWindow(*db, SlowedTable(dir, 1.10, &slowed), 2);
  CompareQuery q;
  q.base = "device:" + a;
  q.now = "device:" + b;
  auto r = Compare(*db, q);
  ASSERT_TRUE(r.ok()) << r.status();
  int64_t found = 0;
  for (const GemmComparison& c : r->gemms) {
    store::GemmKey key;
    key.m = c.key.m;
    key.n = c.key.n;
    key.k = c.key.k;
    const bool was_slowed = slowed.contains(key);
    if (was_slowed) {
      EXPECT_EQ(c.verdict, Verdict::kSlower) << c.key.k << " ratio " << c.ratio;
      ++found;
    } else {
      EXPECT_NE(c.verdict, Verdict::kSlower) << "not slowed: k " << c.key.k << " n " << c.key.n;
    }
  }
  EXPECT_EQ(found, 8) << "the window's down GEMMs at multiples of 16: 10864 … 10976";
  EXPECT_EQ(r->all.slower, found);
  EXPECT_EQ(r->gemms.front().verdict, Verdict::kSlower) << "slowest first";
  const auto lines = SummarizeComparison(*r, 3);
  EXPECT_NE(lines[0].find("8 slower"), std::string::npos) << lines[0];
  EXPECT_NE(lines.back().find("5 more"), std::string::npos) << lines.back();
}

TEST(Compare, ASideThatSelectsNothingOrTooManyGemmsAndABadThresholdAreRefused) {
  TempDir dir;
  auto db = OpenSweepDb(dir);
  const std::string a = ReplayWindow(*db, kTable, 1);
  CompareQuery q;
  q.base = "device:" + a;
  q.now = "cublaslt:999999";
  EXPECT_EQ(Compare(*db, q).status().code(), absl::StatusCode::kNotFound);
  q.now = "device:" + a;
  q.threshold = -0.1;
  EXPECT_EQ(Compare(*db, q).status().code(), absl::StatusCode::kInvalidArgument);
  q.threshold = 0.03;
  q.max_gemms = 100;
  auto bounded = Compare(*db, q);
  EXPECT_EQ(bounded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(bounded.status().message()).find("--base: 'device:"), 0u)
      << bounded.status();
  q.max_gemms = kMaxCompareGemms;
  auto same = Compare(*db, q);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->all.gemms, 0);
  EXPECT_EQ(same->same_run, kReplayWindowGemms) << "one run is never compared with itself";
}

}  // namespace
}  // namespace crest::answers
