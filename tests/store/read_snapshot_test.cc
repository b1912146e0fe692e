// Store::BeginRead / EndRead and ReadSnapshot: one state of the database
// for many reads, while another connection commits.
#include <memory>
#include <span>
#include <string>

#include "crest/store/store.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using store_tests::AddPrediction;
using store_tests::Gemm;
using store_tests::OpenOk;

// How many of `keys` the store holds the H100's predictions of (one read).
size_t PredictionsOf(Store& db, std::span<const GemmKey> keys) {
  const std::string version = tuner::ModelVersionFor(**tuner::FindGpu("h100"), tuner::DType::kBf16);
  auto found = db.FindPredictions("H100-SXM", version, keys);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? found->size() : 0;
}

class ReadSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reader_ = OpenOk(dir_.File("crest.db"));
    writer_ = OpenOk(dir_.File("crest.db"));
    ASSERT_NE(reader_, nullptr);
    ASSERT_NE(writer_, nullptr);
    ASSERT_TRUE(AddPrediction(*writer_, Gemm(4096, 4096, 4096)).ok());
  }

  const GemmKey keys_[2] = {GemmKey::Of(Gemm(4096, 4096, 4096)),
                            GemmKey::Of(Gemm(4096, 8192, 4096))};
  testing::TempDir dir_;
  std::unique_ptr<Store> reader_;
  std::unique_ptr<Store> writer_;
};

TEST_F(ReadSnapshotTest, ReadsInsideOneSeeNoCommitMadeAfterItsFirstRead) {
  {
    ReadSnapshot snapshot(*reader_);
    EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u);
    ASSERT_TRUE(AddPrediction(*writer_, Gemm(4096, 8192, 4096)).ok());
    EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u) << "the second read saw a later commit";
  }
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 2u) << "after the snapshot, reads see the commit";
}

TEST_F(ReadSnapshotTest, WithoutOneEachReadSeesTheLatestCommit) {
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u);
  ASSERT_TRUE(AddPrediction(*writer_, Gemm(4096, 8192, 4096)).ok());
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 2u);
}

TEST_F(ReadSnapshotTest, AnInnerPairEndsNothingTheOuterOneHolds) {
  ReadSnapshot outer(*reader_);
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u);
  { ReadSnapshot inner(*reader_); }
  ASSERT_TRUE(AddPrediction(*writer_, Gemm(4096, 8192, 4096)).ok());
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u) << "the inner snapshot's end ended the outer one";
}

TEST_F(ReadSnapshotTest, AfterOneTheSameConnectionWritesAgain) {
  { ReadSnapshot snapshot(*reader_); }
  {
    ReadSnapshot snapshot(*reader_);
    EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u);
  }
  EXPECT_TRUE(AddPrediction(*reader_, Gemm(4096, 8192, 4096)).ok())
      << "a write after the snapshot's end failed: the transaction is still open";
  EXPECT_EQ(PredictionsOf(*writer_, keys_), 2u);
}

TEST_F(ReadSnapshotTest, AWriteInsideOneFailsAndLeavesTheSnapshotWhole) {
  ReadSnapshot snapshot(*reader_);
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u);
  const absl::Status refused = AddPrediction(*reader_, Gemm(4096, 8192, 4096));
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  ASSERT_TRUE(AddPrediction(*writer_, Gemm(4096, 8192, 4096)).ok());
  EXPECT_EQ(PredictionsOf(*reader_, keys_), 1u) << "the refused write ended the snapshot";
}

}  // namespace
}  // namespace crest::store
