// A window's history: the runs on a software version listed newest first
// (one index seek a run), and one run's rows read alone however many runs
// measured the same GEMMs — what keeps a --runs latest answer from growing
// with a window's history.
#include <map>
#include <memory>
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

// A store with one device (an H100, GPU-a) and its software registered.
class RunHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenOk(dir_.File("a.db"));
    auto ids = db_->RegisterDevice(testing::FakeH100("GPU-a", "node-a"), testing::FakeSoftware());
    ASSERT_TRUE(ids.ok());
    ids_ = *ids;
  }

  // Three nightly runs: the first and last measure g1_ and g2_, the middle
  // one g1_ alone; each slower than the one before (100, 200, 300 us).
  // Their jobs' ids in jobs_.
  void SweepThreeNights() {
    for (int night = 0; night < 3; ++night) {
      JobRecord job;
      job.spec = "{\"name\":\"night-" + std::to_string(night) + "\"}";
      job.backend = "cublaslt";
      job.target = "GPU-a";
      auto created = db_->CreateJob(job);
      ASSERT_TRUE(created.ok());
      jobs_.push_back(created->id);
      const double base = 100.0 * (night + 1);
      ASSERT_TRUE(db_->InsertMeasurement(created->id, ids_.first, ids_.second, "H100-SXM", 132,
                                         testing::FakeMeasurement(g1_, base, 3, 1))
                      .ok());
      if (night == 1) continue;
      ASSERT_TRUE(db_->InsertMeasurement(created->id, ids_.first, ids_.second, "H100-SXM", 132,
                                         testing::FakeMeasurement(g2_, base, 3, 1))
                      .ok());
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<store::Store> db_;
  std::pair<int64_t, int64_t> ids_;  // device, software
  const tuner::GemmShape g1_ = Gemm(4096, 11008, 4096);
  const tuner::GemmShape g2_ = Gemm(4096, 4096, 11008);
  std::vector<int64_t> jobs_;
};

TEST_F(RunHistory, RunsAreListedNewestFirstAndOneRunsRowsAreReadAlone) {
  ASSERT_NO_FATAL_FAILURE(SweepThreeNights());
  auto runs = db_->ListRuns("H100-SXM", ids_.second, kDefaultMode);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run.job_id, jobs_[2]) << "newest first";
  EXPECT_EQ((*runs)[2].run.job_id, jobs_[0]);
  EXPECT_GE((*runs)[0].started_us, (*runs)[1].started_us);
  EXPECT_GT((*runs)[0].started_us, 0);
  EXPECT_TRUE(db_->ListRuns("H100-SXM", ids_.second + 1, kDefaultMode)->empty())
      << "another version's runs are not this one's";

  const store::GemmKey keys[] = {store::GemmKey::Of(g1_), store::GemmKey::Of(g2_)};
  // Keys in any order, repeats included: one answer per key given.
  const store::GemmKey asked[] = {keys[1], keys[0], keys[1]};
  auto middle = db_->RunBestsOf("H100-SXM", (*runs)[1].run, asked, kDefaultMode);
  ASSERT_TRUE(middle.ok()) << middle.status();
  ASSERT_EQ(middle->size(), 3u);
  EXPECT_FALSE((*middle)[0]) << "the middle run measured only the first GEMM";
  EXPECT_FALSE((*middle)[2]);
  ASSERT_TRUE((*middle)[1]);
  EXPECT_EQ((*middle)[1]->run, (*runs)[1].run);
  EXPECT_EQ((*middle)[1]->started_us, (*runs)[1].started_us);
  auto newest = db_->RunBestsOf("H100-SXM", (*runs)[0].run, keys, kDefaultMode);
  ASSERT_TRUE(newest.ok());
  ASSERT_TRUE((*newest)[0] && (*newest)[1]);
  EXPECT_LT((*middle)[1]->median_us, (*newest)[0]->median_us) << "each night slower";
  auto all = db_->RunBests("H100-SXM", keys, ids_.second, kDefaultMode);
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
    auto alone = db_->RunBestsOf("H100-SXM", b.run, {&keys[0], 1}, kDefaultMode);
    ASSERT_TRUE(alone.ok() && (*alone)[0]);
    EXPECT_EQ((*alone)[0]->measurement_id, b.measurement_id);
    EXPECT_EQ((*alone)[0]->median_us, b.median_us);
  }
}

// Several runs asked about one key set in one call: each run's bests are
// what RunBestsOf gives for it alone (a kept key set, and one too large to
// keep), in the order given, and reading stops when the caller has enough.
TEST_F(RunHistory, EachRunOfOneReadGivesWhatThatRunAloneGives) {
  ASSERT_NO_FATAL_FAILURE(SweepThreeNights());
  auto runs = db_->ListRuns("H100-SXM", ids_.second, kDefaultMode);
  ASSERT_TRUE(runs.ok() && runs->size() == 3u);
  std::vector<store::RunKey> newest;
  for (const RunBest& r : *runs) newest.push_back(r.run);
  std::vector<store::GemmKey> small = {store::GemmKey::Of(g2_), store::GemmKey::Of(g1_),
                                       store::GemmKey::Of(g2_)};
  std::vector<store::GemmKey> large = small;
  for (int64_t n = 1; large.size() < 20000; ++n) {
    large.push_back(store::GemmKey::Of(Gemm(4096, 30000 + n, 4096)));
  }
  for (const auto& keys : {small, large}) {
    std::vector<size_t> read;
    std::vector<std::vector<std::optional<RunBest>>> got;  // each run's, copied
    auto status =
        db_->ForEachRunBests("H100-SXM", newest, keys, kDefaultMode, tuner::AlgoChoice::kBest,
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
      auto alone = db_->RunBestsOf("H100-SXM", newest[r], keys, kDefaultMode);
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
      EXPECT_EQ(got[r][0].has_value(), r != 1) << "the middle night measured g1_ alone";
      EXPECT_TRUE(got[r][1].has_value());
    }
  }
  size_t calls = 0;
  auto stopped =
      db_->ForEachRunBests("H100-SXM", newest, small, kDefaultMode, tuner::AlgoChoice::kBest,
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
TEST_F(RunHistory, EachRunsReadAnswersTheKeysItWasGivenWhenItsSetRepeatsOrChanges) {
  const tuner::GemmShape gemms[] = {Gemm(4096, 11008, 4096), Gemm(4096, 4096, 11008),
                                    Gemm(4096, 11136, 4096)};
  std::map<store::GemmKey, double> median;
  for (size_t i = 0; i < std::size(gemms); ++i) {
    const double us = 100.0 * static_cast<double>(i + 1);
    ASSERT_TRUE(db_->InsertMeasurement(std::nullopt, ids_.first, ids_.second, "H100-SXM", 132,
                                       testing::FakeMeasurement(gemms[i], us, 3, 1))
                    .ok());
    median[store::GemmKey::Of(gemms[i])] = us;
  }
  auto runs = db_->ListRuns("H100-SXM", ids_.second, kDefaultMode);
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
    auto found = db_->RunBestsOf("H100-SXM", run, keys, kDefaultMode);
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
