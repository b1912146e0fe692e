// Administration beside the store (crest/store/admin.h): the functions work
// on a store Store::Open gave and refuse, naming why, any other Store.
#include "crest/store/admin.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "store_testing.h"
#include "temp_dir.h"

namespace crest::store {
namespace {

// A Store that is not a SQLite file: every method answers Unimplemented.
class NotASqliteStore final : public Store {
 public:
  absl::StatusOr<JobRecord> FindJob(const std::string&, const std::string&,
                                    const std::string&) override {
    return Unimplemented();
  }
  absl::StatusOr<JobRecord> CreateJob(const JobRecord&) override { return Unimplemented(); }
  absl::StatusOr<JobRecord> GetJob(int64_t) override { return Unimplemented(); }
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobListing&) override {
    return Unimplemented();
  }
  absl::Status UpdateJob(int64_t, JobState, int64_t, int64_t, const std::string&) override {
    return Unimplemented();
  }
  absl::StatusOr<std::map<std::string, int64_t>> JobsByState() override { return Unimplemented(); }
  const std::string& path() const override { return path_; }
  int64_t NowUs() const override { return 0; }
  absl::StatusOr<bool> HasPrediction(const std::string&, std::string_view,
                                     const GemmKey&) override {
    return Unimplemented();
  }
  absl::StatusOr<bool> InsertPrediction(std::optional<int64_t>, const std::string&,
                                        const tuner::GemmShape&,
                                        const tuner::Prediction&) override {
    return Unimplemented();
  }
  absl::StatusOr<int64_t> InsertPredictions(std::optional<int64_t>, const std::string&,
                                            std::span<const PredictionToWrite>) override {
    return Unimplemented();
  }
  absl::StatusOr<std::map<GemmKey, PredictionRow>> FindPredictions(
      const std::string&, std::string_view, std::span<const GemmKey>) override {
    return Unimplemented();
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> RegisterDevice(const tuner::DeviceInfo&,
                                                             const tuner::SoftwareInfo&) override {
    return Unimplemented();
  }
  absl::StatusOr<bool> HasMeasurement(int64_t, int64_t, const GemmKey&,
                                      const tuner::MeasureMode&) override {
    return Unimplemented();
  }
  absl::Status InsertMeasurement(std::optional<int64_t>, int64_t, int64_t, const std::string&, int,
                                 const tuner::MeasuredGemm&) override {
    return Unimplemented();
  }
  absl::StatusOr<MeasurementRow> GetMeasurement(int64_t) override { return Unimplemented(); }
  absl::StatusOr<std::vector<int64_t>> SoftwareVersions(const SoftwarePin&) override {
    return Unimplemented();
  }
  absl::StatusOr<std::map<GemmKey, std::vector<RunBest>>> RunBests(const std::string&,
                                                                   std::span<const GemmKey>,
                                                                   int64_t,
                                                                   const tuner::MeasureMode&,
                                                                   tuner::AlgoChoice) override {
    return Unimplemented();
  }
  absl::Status ForEachRunBests(const std::string&, std::span<const RunKey>,
                               std::span<const GemmKey>, const tuner::MeasureMode&,
                               tuner::AlgoChoice, TakeRunBests) override {
    return Unimplemented();
  }
  absl::StatusOr<std::vector<RunBest>> ListRuns(const std::string&, int64_t,
                                                const tuner::MeasureMode&) override {
    return Unimplemented();
  }
  absl::StatusOr<std::vector<RunRecord>> DescribeRuns(std::span<const RunKey>) override {
    return Unimplemented();
  }
  absl::StatusOr<std::vector<SelectedBest>> NewestRunBests(const RunFilter&) override {
    return Unimplemented();
  }
  absl::StatusOr<std::vector<tuner::AlgoIdentity>> StoredTopAlgos(const std::string&,
                                                                  const GemmKey&,
                                                                  const tuner::MeasureMode&,
                                                                  int64_t, int) override {
    return Unimplemented();
  }
  absl::StatusOr<int64_t> InsertRace(const RaceRecord&) override { return Unimplemented(); }
  absl::StatusOr<std::optional<RaceRecord>> FindRace(int64_t, const std::string&,
                                                     const std::string&, const tuner::MeasureMode&,
                                                     tuner::AlgoChoice, bool) override {
    return Unimplemented();
  }
  absl::StatusOr<std::vector<ImportedRow>> ImportedTimings(const std::string&) override {
    return Unimplemented();
  }
  absl::StatusOr<ResultsGeneration> Generation(const std::string&) override {
    return Unimplemented();
  }
  absl::StatusOr<ResultsGeneration> LatestGeneration() override { return Unimplemented(); }
  absl::Status BeginRead() override { return Unimplemented(); }
  void EndRead() override {}

 private:
  static absl::Status Unimplemented() { return absl::UnimplementedError("not a SQLite store"); }
  std::string path_ = "fake";
};

TEST(StoreAdmin, EachFunctionRefusesAStoreThatIsNotASqliteFile) {
  NotASqliteStore fake;
  const auto refused = [](const absl::Status& s) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("Store::Open"), std::string_view::npos) << s;
  };
  refused(ExportTo(fake, "/tmp/never-written.db"));
  refused(MergeFrom(fake, "/tmp/never-read.db").status());
  refused(Check(fake).status());
  refused(QuickCheck(fake).status());
  refused(Stats(fake).status());
  refused(Import(fake, ImportBatch{}).status());
}

TEST(StoreAdmin, OnAnOpenedStoreTheyReachItsDatabase) {
  crest::testing::TempDir dir;
  auto db = crest::store_tests::OpenOk(dir.File("node.db"));
  EXPECT_TRUE(Check(*db)->ok);
  EXPECT_TRUE(QuickCheck(*db)->empty());
  EXPECT_EQ(Stats(*db)->measurements, 0);
  ASSERT_TRUE(ExportTo(*db, dir.File("snapshot.db")).ok());
  EXPECT_EQ(MergeFrom(*db, dir.File("snapshot.db"))->measurements, 0);
}

}  // namespace
}  // namespace crest::store
