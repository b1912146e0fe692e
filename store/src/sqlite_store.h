// Internal to crest::store: the SQLite implementation of Store.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "key_batches.h"
#include "sqlite.h"
#include "wal_index.h"

namespace crest::store::internal {

class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<Connection> conn, StoreOptions options);

  const std::string& path() const override { return conn_->path(); }
  int64_t NowUs() const override { return static_cast<int64_t>(options_.env->NowSeconds() * 1e6); }

  // jobs.cc
  absl::StatusOr<JobRecord> FindJob(const std::string& spec, const std::string& backend,
                                    const std::string& target) override;
  absl::StatusOr<JobRecord> CreateJob(const JobRecord& job) override;
  absl::StatusOr<JobRecord> GetJob(int64_t id) override;
  absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobListing& listing) override;
  absl::Status UpdateJob(int64_t id, JobState state, int64_t total, int64_t done,
                         const std::string& error) override;

  // results.cc (run_bests.cc: RunBests, ForEachRunBests, ListRuns)
  absl::StatusOr<bool> HasPrediction(const std::string& gpu_model, std::string_view model_version,
                                     const GemmKey& key) override;
  absl::StatusOr<bool> InsertPrediction(std::optional<int64_t> job_id, const std::string& gpu_model,
                                        const tuner::GemmShape& gemm,
                                        const tuner::Prediction& p) override;
  absl::StatusOr<int64_t> InsertPredictions(std::optional<int64_t> job_id,
                                            const std::string& gpu_model,
                                            std::span<const PredictionToWrite> batch) override;
  absl::StatusOr<std::map<GemmKey, PredictionRow>> FindPredictions(
      const std::string& gpu_model, std::string_view model_version,
      std::span<const GemmKey> keys) override;
  absl::StatusOr<std::pair<int64_t, int64_t>> RegisterDevice(
      const tuner::DeviceInfo& device, const tuner::SoftwareInfo& sw) override;
  absl::StatusOr<bool> HasMeasurement(int64_t device_id, int64_t software_id, const GemmKey& key,
                                      const tuner::MeasureMode& mode) override;
  absl::Status InsertMeasurement(std::optional<int64_t> job_id, int64_t device_id,
                                 int64_t software_id, const std::string& gpu_model, int sm_count,
                                 const tuner::MeasuredGemm& measured) override;
  absl::StatusOr<MeasurementRow> GetMeasurement(int64_t id) override;
  absl::StatusOr<std::vector<int64_t>> SoftwareVersions(const SoftwarePin& pin) override;
  absl::StatusOr<std::map<GemmKey, std::vector<RunBest>>> RunBests(const std::string& gpu_model,
                                                                   std::span<const GemmKey> keys,
                                                                   int64_t software_id,
                                                                   const tuner::MeasureMode& mode,
                                                                   tuner::AlgoChoice algo) override;
  absl::Status ForEachRunBests(const std::string& gpu_model, std::span<const RunKey> runs,
                               std::span<const GemmKey> keys, const tuner::MeasureMode& mode,
                               tuner::AlgoChoice algo, TakeRunBests take) override;
  absl::StatusOr<std::vector<RunBest>> ListRuns(const std::string& gpu_model, int64_t software_id,
                                                const tuner::MeasureMode& mode) override;
  absl::StatusOr<std::vector<RunRecord>> DescribeRuns(std::span<const RunKey> runs) override;
  // selection.cc
  absl::StatusOr<std::vector<SelectedBest>> NewestRunBests(const RunFilter& filter) override;
  absl::StatusOr<std::vector<tuner::AlgoIdentity>> StoredTopAlgos(const std::string& gpu_model,
                                                                  const GemmKey& key,
                                                                  const tuner::MeasureMode& mode,
                                                                  int64_t except_software_id,
                                                                  int count) override;

  // races.cc
  absl::StatusOr<int64_t> InsertRace(const RaceRecord& race) override;
  absl::StatusOr<std::optional<RaceRecord>> FindRace(int64_t job_id, const std::string& device_uuid,
                                                     const std::string& study,
                                                     const tuner::MeasureMode& mode,
                                                     tuner::AlgoChoice algo,
                                                     bool with_times) override;

  // imported.cc
  absl::StatusOr<int64_t> InsertImported(const ImportBatch& batch);  // admin.h's Import
  absl::StatusOr<std::vector<ImportedRow>> ImportedTimings(const std::string& gpu_model) override;

  // fleet.cc: admin.h's functions, outside the Store interface
  absl::Status ExportTo(const std::string& out_path);
  absl::StatusOr<MergeReport> MergeFrom(const std::string& snapshot_path);
  absl::StatusOr<CheckReport> Check();
  absl::StatusOr<std::vector<std::string>> QuickCheck();
  absl::StatusOr<DbStats> Stats();
  absl::StatusOr<ResultsGeneration> Generation(const std::string& gpu_model) override;
  absl::StatusOr<ResultsGeneration> LatestGeneration() override;
  absl::StatusOr<std::map<std::string, int64_t>> JobsByState() override;
  // store.cc
  absl::Status BeginRead() override;
  void EndRead() override;

 private:
  // A new globally unique id: 128 random bits in hex.
  std::string NewUid();
  // Runs `body` inside BEGIN IMMEDIATE … COMMIT; rolls back on error.
  absl::Status InTransaction(std::string_view doing, const std::function<absl::Status()>& body);
  // Folds verified measurement rows with id > `after_id` into run_bests
  // (inside a transaction).
  absl::Status UpdateRunBests(int64_t after_id);
  // Adds `count` to a job's done counter (inside a transaction).
  absl::Status CountProgress(std::optional<int64_t> job_id, int64_t count);
  absl::Status WriteAllowed() const;
  // FailedPrecondition when the database holds a device of `device`'s GPU
  // model of the other kind (replayed vs measured) (inside a transaction).
  absl::Status RefuseMixedKinds(const tuner::DeviceInfo& device, const std::string& host);
  // The WAL-index header now (wal_index.h); nullopt when the database is not
  // in WAL mode or the header is being written.
  std::optional<WalIndexMark::Header> ReadWalMark();

  // A key set as ForEachRunBests scans it: its sorted keys, where each asked key
  // went, and their index ranges.
  struct BatchedKeys {
    std::vector<GemmKey> asked;  // as the caller gave them
    WantedKeys wanted;
    std::vector<KeyRange> ranges;
  };
  // `keys` batched: the last set's batches again when `keys` equals it (the
  // same window asked again on this connection, by the next answer or by
  // the same answer for an older software version; the batches depend on
  // the keys alone), else a new set's, kept when at most kMaxKeptKeys and
  // otherwise made in `unkept` (the caller's, freed with it).
  const BatchedKeys& Batched(std::span<const GemmKey> keys, BatchedKeys& unkept);
  // One run's fastest row of each key of `ranges` into `found`, by the
  // key's slot (found's size is the wanted keys'; entries the run lacks are
  // left as they are). run_bests.cc.
  absl::Status ReadRunBests(const std::string& gpu_model, const RunKey& run,
                            std::span<const KeyRange> ranges, const tuner::MeasureMode& mode,
                            tuner::AlgoChoice algo, std::vector<std::optional<RunBest>>& found);
  static constexpr size_t kMaxKeptKeys = 16384;  // about 2 MB kept a connection

  std::unique_ptr<Connection> conn_;
  StoreOptions options_;
  std::mt19937_64 random_;
  // Generation's memo: the generations read while the WAL-index header was
  // `generation_mark_`, valid until a commit anywhere changes the header.
  bool wal_mark_opened_ = false;
  std::optional<WalIndexMark> wal_mark_;
  std::optional<WalIndexMark::Header> generation_mark_;
  std::map<std::string, ResultsGeneration, std::less<>> known_generations_;
  BatchedKeys batched_;  // Batched's last kept set (empty: none)
  // BeginRead's nesting, and whether its outermost pair began the
  // transaction (not when the connection was in one already).
  int read_depth_ = 0;
  bool read_begun_ = false;
};

}  // namespace crest::store::internal
