// Timings imported from another tool (imported.cc): once, labelled, never an answer.

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

using crest::store_tests::Gemm;
using crest::store_tests::kDefaultMode;
using crest::store_tests::NewestRow;
using crest::store_tests::OpenOk;
using crest::testing::TempDir;

ImportBatch Imported(const std::string& hash, std::initializer_list<int64_t> ks) {
  ImportBatch b;
  b.gpu_model = "H100-SXM";
  b.device = "NVIDIA H100 80GB HBM3";
  b.tool = "torch.matmul, median of 20";
  b.source_file = "t.csv";
  b.source_hash = hash;
  for (int64_t k : ks) {
    b.rows.push_back({GemmKey::Of(Gemm(8192, 4096, k)), 1000.0 + static_cast<double>(k % 7)});
  }
  return b;
}

TEST(StoreImported, ImportingAFileAgainAddsNothingAndRowsKeepTheirSource) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  EXPECT_EQ(*store::Import(*db, Imported("h1", {10920, 10921, 10922})), 3);
  EXPECT_EQ(*store::Import(*db, Imported("h1", {10920, 10921, 10922})), 0) << "imported twice";
  EXPECT_EQ(*store::Import(*db, Imported("h2", {10920})), 1) << "another file is another run";
  auto rows = db->ImportedTimings("H100-SXM");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].tool, "torch.matmul, median of 20");
  EXPECT_EQ((*rows)[0].device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*rows)[0].timing.key.k, 10920);
  EXPECT_TRUE(db->ImportedTimings("A100-SXM-80GB")->empty());
  EXPECT_EQ(store::Stats(*db)->imported, 4);
  EXPECT_EQ(store::Stats(*db)->imported_by_gpu.at("H100-SXM"), 4);
}

TEST(StoreImported, ImportedTimingsNeverAnswerALookup) {
  TempDir dir;
  auto db = OpenOk(dir.File("a.db"));
  ASSERT_TRUE(store::Import(*db, Imported("h1", {10920})).ok());
  const GemmKey key = GemmKey::Of(Gemm(8192, 4096, 10920));
  EXPECT_FALSE(NewestRow(*db, "H100-SXM", key)->has_value());
  store::RunFilter every;
  EXPECT_TRUE(db->NewestRunBests(every)->empty());
  EXPECT_EQ(store::Stats(*db)->measurements, 0);
}

TEST(StoreImported, MergesCarryImportedTimingsOnce) {
  TempDir dir;
  auto node = OpenOk(dir.File("node.db"));
  ASSERT_TRUE(store::Import(*node, Imported("h1", {10920, 10921})).ok());
  ASSERT_TRUE(store::ExportTo(*node, dir.File("snap.db")).ok());
  auto catalogue = OpenOk(dir.File("cat.db"));
  EXPECT_EQ(store::MergeFrom(*catalogue, dir.File("snap.db"))->imported, 2);
  EXPECT_EQ(store::MergeFrom(*catalogue, dir.File("snap.db"))->imported, 0);
  EXPECT_EQ(catalogue->ImportedTimings("H100-SXM")->size(), 2u);
}

}  // namespace
}  // namespace crest::store
