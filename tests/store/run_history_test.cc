// A window's history: the runs on a software version listed newest first
// (one index seek a run), and one run's rows read alone however many runs
// measured the same GEMMs — what keeps a --runs latest answer from growing
// with a window's history.
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "crest/store/store.h"
#include "fake_results.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest {
namespace {

using store::JobRecord;
using store::RunBest;
using store_tests::Gemm;
using store_tests::OpenOk;

constexpr tuner::MeasureMode kDefaultMode{};

TEST(RunHistory, RunsAreListedNewestFirstAndOneRunsRowsAreReadAlone) {
  testing::TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  auto ids = db->RegisterDevice(testing::FakeH100("GPU-a", "node-a"), testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const tuner::GemmShape g1 = Gemm(4096, 11008, 4096);
  const tuner::GemmShape g2 = Gemm(4096, 4096, 11008);
  // Three nightly runs: the first and last measure both GEMMs, the middle
  // one only the first; each slower than the one before.
  std::vector<int64_t> jobs;
  for (int night = 0; night < 3; ++night) {
    JobRecord job;
    job.spec = "{\"name\":\"night-" + std::to_string(night) + "\"}";
    job.backend = "cublaslt";
    job.target = "GPU-a";
    auto created = db->CreateJob(job);
    ASSERT_TRUE(created.ok());
    jobs.push_back(created->id);
    const double base = 100.0 * (night + 1);
    ASSERT_TRUE(db->InsertMeasurement(created->id, ids->first, ids->second, "H100-SXM", 132,
                                      testing::FakeMeasurement(g1, base, 3, 1))
                    .ok());
    if (night == 1) continue;
    ASSERT_TRUE(db->InsertMeasurement(created->id, ids->first, ids->second, "H100-SXM", 132,
                                      testing::FakeMeasurement(g2, base, 3, 1))
                    .ok());
  }
  auto runs = db->ListRuns("H100-SXM", ids->second, kDefaultMode);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run.job_id, jobs[2]) << "newest first";
  EXPECT_EQ((*runs)[2].run.job_id, jobs[0]);
  EXPECT_GE((*runs)[0].started_us, (*runs)[1].started_us);
  EXPECT_GT((*runs)[0].started_us, 0);
  EXPECT_TRUE(db->ListRuns("H100-SXM", ids->second + 1, kDefaultMode)->empty())
      << "another version's runs are not this one's";

  const store::GemmKey keys[] = {store::GemmKey::Of(g1), store::GemmKey::Of(g2)};
  // Keys in any order, repeats included: one answer per key given.
  const store::GemmKey asked[] = {keys[1], keys[0], keys[1]};
  auto middle = db->RunBestsOf("H100-SXM", (*runs)[1].run, asked, kDefaultMode);
  ASSERT_TRUE(middle.ok()) << middle.status();
  ASSERT_EQ(middle->size(), 3u);
  EXPECT_FALSE((*middle)[0]) << "the middle run measured only the first GEMM";
  EXPECT_FALSE((*middle)[2]);
  ASSERT_TRUE((*middle)[1]);
  EXPECT_EQ((*middle)[1]->run, (*runs)[1].run);
  EXPECT_EQ((*middle)[1]->started_us, (*runs)[1].started_us);
  auto newest = db->RunBestsOf("H100-SXM", (*runs)[0].run, keys, kDefaultMode);
  ASSERT_TRUE(newest.ok());
  ASSERT_TRUE((*newest)[0] && (*newest)[1]);
  EXPECT_LT((*middle)[1]->median_us, (*newest)[0]->median_us) << "each night slower";
  auto all = db->RunBests("H100-SXM", keys, ids->second, kDefaultMode);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->at(keys[0]).size(), 3u);
  EXPECT_EQ(all->at(keys[1]).size(), 2u);
  for (const auto& [key, of_key] : *all) {
    for (size_t i = 1; i < of_key.size(); ++i) {
      EXPECT_FALSE(of_key[i].run == of_key[i - 1].run) << "one row per run";
    }
  }
  // The run read alone gives the figures RunBests gives for that run.
  for (const RunBest& b : all->at(keys[0])) {
    auto alone = db->RunBestsOf("H100-SXM", b.run, {&keys[0], 1}, kDefaultMode);
    ASSERT_TRUE(alone.ok() && (*alone)[0]);
    EXPECT_EQ((*alone)[0]->measurement_id, b.measurement_id);
    EXPECT_EQ((*alone)[0]->median_us, b.median_us);
  }
}

// Several runs asked about one key set in one call: each run's bests are
// what RunBestsOf gives for it alone (a kept key set, and one too large to
// keep), in the order given, and reading stops when the caller has enough.
TEST(RunHistory, EachRunOfOneReadGivesWhatThatRunAloneGives) {
  testing::TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  auto ids = db->RegisterDevice(testing::FakeH100("GPU-a", "node-a"), testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const tuner::GemmShape g1 = Gemm(4096, 11008, 4096);
  const tuner::GemmShape g2 = Gemm(4096, 4096, 11008);
  for (int night = 0; night < 3; ++night) {  // the middle night measures g1 alone
    JobRecord job;
    job.spec = "{}";
    job.backend = "cublaslt";
    job.target = "GPU-a";
    auto created = db->CreateJob(job);
    ASSERT_TRUE(created.ok());
    const tuner::GemmShape measured[] = {g1, g2};
    for (size_t i = 0; i < (night == 1 ? 1u : 2u); ++i) {
      ASSERT_TRUE(
          db->InsertMeasurement(created->id, ids->first, ids->second, "H100-SXM", 132,
                                testing::FakeMeasurement(measured[i], 100.0 * (night + 1), 3, 1))
              .ok());
    }
  }
  auto runs = db->ListRuns("H100-SXM", ids->second, kDefaultMode);
  ASSERT_TRUE(runs.ok() && runs->size() == 3u);
  std::vector<store::RunKey> newest;
  for (const RunBest& r : *runs) newest.push_back(r.run);
  std::vector<store::GemmKey> small = {store::GemmKey::Of(g2), store::GemmKey::Of(g1),
                                       store::GemmKey::Of(g2)};
  std::vector<store::GemmKey> large = small;
  for (int64_t n = 1; large.size() < 20000; ++n) {
    large.push_back(store::GemmKey::Of(Gemm(4096, 30000 + n, 4096)));
  }
  for (const auto& keys : {small, large}) {
    std::vector<size_t> read;
    std::vector<std::vector<std::optional<RunBest>>> got;  // each run's, copied
    auto status =
        db->ForEachRunBests("H100-SXM", newest, keys, kDefaultMode, tuner::AlgoChoice::kBest,
                            [&](size_t r, std::span<const RunBest* const> bests) {
                              read.push_back(r);
                              auto& of_run = got.emplace_back();
                              for (const RunBest* b : bests) {
                                of_run.push_back(b ? std::optional(*b) : std::nullopt);
                              }
                              return true;
                            });
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(read, (std::vector<size_t>{0, 1, 2})) << keys.size() << " keys";
    for (size_t r = 0; r < got.size(); ++r) {
      auto alone = db->RunBestsOf("H100-SXM", newest[r], keys, kDefaultMode);
      ASSERT_TRUE(alone.ok());
      ASSERT_EQ(got[r].size(), alone->size());
      for (size_t i = 0; i < alone->size(); ++i) {
        ASSERT_EQ(got[r][i].has_value(), (*alone)[i].has_value()) << r << " " << i;
        if (!got[r][i]) continue;
        EXPECT_EQ(got[r][i]->measurement_id, (*alone)[i]->measurement_id);
        EXPECT_EQ(got[r][i]->median_us, 100.0 * static_cast<double>(3 - r)) << "newest first";
        EXPECT_EQ(got[r][i]->run, newest[r]);
        EXPECT_EQ(got[r][i]->started_us, (*runs)[r].started_us);
      }
      EXPECT_EQ(got[r][0].has_value(), r != 1) << "the middle night measured g1 alone";
      EXPECT_TRUE(got[r][1].has_value());
    }
  }
  size_t calls = 0;
  auto stopped =
      db->ForEachRunBests("H100-SXM", newest, small, kDefaultMode, tuner::AlgoChoice::kBest,
                          [&](size_t, std::span<const RunBest* const>) {
                            ++calls;
                            return false;
                          });
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(calls, 1u) << "no run read after the caller said enough";
}

// An answer asks each newest run for the same keys, and the store batches
// a key set once for all of them: each call still answers exactly the keys
// it was given, the same set again, another of the same size, the first, or
// one too large to keep (between two calls that reuse the kept one).
TEST(RunHistory, EachRunsReadAnswersTheKeysItWasGivenWhenItsSetRepeatsOrChanges) {
  testing::TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  auto ids = db->RegisterDevice(testing::FakeH100("GPU-a", "node-a"), testing::FakeSoftware());
  ASSERT_TRUE(ids.ok());
  const tuner::GemmShape gemms[] = {Gemm(4096, 11008, 4096), Gemm(4096, 4096, 11008),
                                    Gemm(4096, 11136, 4096)};
  std::map<store::GemmKey, double> median;
  for (size_t i = 0; i < std::size(gemms); ++i) {
    const double us = 100.0 * static_cast<double>(i + 1);
    ASSERT_TRUE(db->InsertMeasurement(std::nullopt, ids->first, ids->second, "H100-SXM", 132,
                                      testing::FakeMeasurement(gemms[i], us, 3, 1))
                    .ok());
    median[store::GemmKey::Of(gemms[i])] = us;
  }
  auto runs = db->ListRuns("H100-SXM", ids->second, kDefaultMode);
  ASSERT_TRUE(runs.ok() && runs->size() == 1u);
  const store::RunKey run = (*runs)[0].run;
  const store::GemmKey a = store::GemmKey::Of(gemms[0]);
  const store::GemmKey b = store::GemmKey::Of(gemms[1]);
  const store::GemmKey c = store::GemmKey::Of(gemms[2]);
  // A set too large to keep (over 16,384 keys): the rest not measured.
  std::vector<store::GemmKey> large = {c, b};
  for (int64_t n = 1; large.size() < 20000; ++n) {
    large.push_back(store::GemmKey::Of(Gemm(4096, 20000 + n, 4096)));
  }
  const std::vector<std::vector<store::GemmKey>> asked = {{a, b}, {a, b}, {b, c}, large,
                                                          {c, a}, large,  {c, a}, {a, b}};
  for (const auto& keys : asked) {
    auto found = db->RunBestsOf("H100-SXM", run, keys, kDefaultMode);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_EQ(found->size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ((*found)[i].has_value(), median.contains(keys[i])) << i;
      if ((*found)[i]) {
        EXPECT_EQ((*found)[i]->median_us, median.at(keys[i]));
      }
    }
  }
}

}  // namespace
}  // namespace crest
