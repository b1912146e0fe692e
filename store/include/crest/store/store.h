// The Crest result store: one SQLite file per node holding devices,
// software, jobs, measurements and predictions with their provenance.
//
// Thread safety: a Store is one SQLite connection; use it from one thread at
// a time. Many processes and threads may each open their own Store on the
// same file: WAL mode lets readers answer while one writer commits, and
// writers wait up to busy_timeout_ms for each other.
//
// Durability: every write is one BEGIN IMMEDIATE transaction; a result and
// its job's progress commit together, so a crash loses at most the result
// being written and never leaves a job counting a result it lacks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "crest/common/env.h"
#include "crest/store/job_store.h"
#include "crest/store/records.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/predictor.h"

namespace crest::store {

// SQLite's page size (its default) for the files a store creates: what
// StoreOptions::max_pages counts.
inline constexpr int64_t kPageBytes = 4096;

// One GEMM's prediction for Store::InsertPredictions.
struct PredictionToWrite {
  const tuner::GemmShape* gemm = nullptr;
  const tuner::Prediction* prediction = nullptr;
};

struct StoreOptions {
  // Open for reading only; never creates, never migrates. A file at an older
  // schema is refused with a message saying how to upgrade it.
  bool read_only = false;
  // Create the file when missing (writers only). A file that is missing
  // where it must not be created (read_only, or !create) is NotFound.
  bool create = true;
  // fsync each commit (FULL); false uses NORMAL: safe when the process dies,
  // may lose the last commits if the machine loses power.
  bool synchronous_full = true;
  // How long a statement waits for another connection's lock [ms].
  int busy_timeout_ms = 10000;
  // Caps the file at this many pages (PRAGMA max_page_count; 0 = no cap). A
  // write past it fails as a full disk would: ResourceExhausted, nothing of
  // that transaction written. The write-ahead log beside it is then
  // checkpointed and cut back at a third of this (4 KiB pages), so the two
  // together stay near 4/3 of the cap.
  int64_t max_pages = 0;
  // Read the file through a memory map (PRAGMA mmap_size): no system call per
  // page, the fastest for a reader alone. But SQLite drops the whole map when
  // a transaction starts after another connection wrote, so a reader that
  // serves many short transactions while a sweep writes (crestd's request
  // connections) pays an munmap and TLB shootdown each time: it sets false
  // and reads pages through the OS page cache instead.
  bool memory_map = true;
  // SQLite VFS to open through (tests inject faults this way); nullptr = default.
  const char* vfs = nullptr;
  // The clock (row timestamps) and the host name; nullptr = DefaultEnv().
  Env* env = nullptr;
  // Host name recorded with jobs, devices and predictions, when this store
  // speaks for another node (fleet tests and benchmarks); default: env's.
  std::string host;
  // Tests only: stop migrating at this version (0 = kSchemaVersion, schema_version.h).
  int migrate_to_for_test = 0;
};

class Store : public JobStore {
 public:
  // Opens (and, for writers, creates and migrates) the database at `path`.
  // Errors name the file and the problem: not a database, corrupt, a newer
  // schema than this build knows, unwritable location.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                                     const StoreOptions& options = {});
  ~Store() override = default;

  virtual const std::string& path() const = 0;
  virtual int64_t NowUs() const = 0;

  // ---- predictions
  virtual absl::StatusOr<bool> HasPrediction(const std::string& gpu_model,
                                             std::string_view model_version,
                                             const GemmKey& key) = 0;
  // Inserts one prediction and counts it in the job's progress, in one
  // transaction. An existing identical key is left as is (no duplicate):
  // false then, true when this call added the row (another writer may have
  // added the same key since the caller looked).
  virtual absl::StatusOr<bool> InsertPrediction(std::optional<int64_t> job_id,
                                                const std::string& gpu_model,
                                                const tuner::GemmShape& gemm,
                                                const tuner::Prediction& p) = 0;
  // InsertPrediction for many GEMMs in one transaction (one commit, one
  // sync): all of them and the job's progress (+ their count), or none.
  // Returns how many rows this call added.
  virtual absl::StatusOr<int64_t> InsertPredictions(std::optional<int64_t> job_id,
                                                    const std::string& gpu_model,
                                                    std::span<const PredictionToWrite> batch) = 0;
  virtual absl::StatusOr<std::map<GemmKey, PredictionRow>> FindPredictions(
      const std::string& gpu_model, std::string_view model_version,
      std::span<const GemmKey> keys) = 0;

  // ---- measurements
  // Registers (or finds) the device and software; returns their row ids.
  virtual absl::StatusOr<std::pair<int64_t, int64_t>> RegisterDevice(
      const tuner::DeviceInfo& device, const tuner::SoftwareInfo& sw) = 0;
  // True when this device and software already measured this GEMM in this
  // mode (cache mode and clock policy).
  virtual absl::StatusOr<bool> HasMeasurement(int64_t device_id, int64_t software_id,
                                              const GemmKey& key,
                                              const tuner::MeasureMode& mode) = 0;
  // Inserts one row per algorithm of `measured` and counts one GEMM in the
  // job's progress, in one transaction.
  virtual absl::Status InsertMeasurement(std::optional<int64_t> job_id, int64_t device_id,
                                         int64_t software_id, const std::string& gpu_model,
                                         int sm_count, const tuner::MeasuredGemm& measured) = 0;
  virtual absl::StatusOr<MeasurementRow> GetMeasurement(int64_t id) = 0;
  // The software versions `pin` allows, newest first (cuBLASLt, then CUDA
  // runtime, then driver): the order answers try them in.
  virtual absl::StatusOr<std::vector<int64_t>> SoftwareVersions(const SoftwarePin& pin) = 0;
  // Per run on software `software_id`, each key's fastest verified
  // algorithm on `gpu_model` measured in `mode`: what answers that combine
  // GEMMs read, so that a sum is taken over the GEMMs of one run (RunKey).
  // Keys no run measured are absent; a key's runs come in no particular
  // order, each with its job's start.
  // With AlgoChoice::kDefault, each key's row of cuBLASLt's first choice
  // (heuristic_rank 0, verified) instead; keys whose first choice no run
  // recorded are absent.
  virtual absl::StatusOr<std::map<GemmKey, std::vector<RunBest>>> RunBests(
      const std::string& gpu_model, std::span<const GemmKey> keys, int64_t software_id,
      const tuner::MeasureMode& mode, tuner::AlgoChoice algo = tuner::AlgoChoice::kBest) = 0;
  // RunBests of one run alone: one entry per key, in the order given (keys
  // may repeat), nullopt where the run has none. An index seek per key
  // range, however many other runs measured the keys.
  absl::StatusOr<std::vector<std::optional<RunBest>>> RunBestsOf(
      const std::string& gpu_model, const RunKey& run, std::span<const GemmKey> keys,
      const tuner::MeasureMode& mode, tuner::AlgoChoice algo = tuner::AlgoChoice::kBest);
  // What each run's bests are, for a caller that asks several runs about
  // the same keys. RunBestsOf of runs[0], runs[1], ... in turn, each
  // handed to `take(i, bests)` (one per key, nullptr where the run has
  // none; valid during that call only), until `take` returns false or the
  // runs end. The keys are batched once and the bests' memory is reused
  // from run to run (a large key set is megabytes: fresh pages for every
  // run cost more than the reads). `take` must not use this store.
  using TakeRunBests =
      absl::FunctionRef<bool(size_t run_index, std::span<const RunBest* const> bests)>;
  virtual absl::Status ForEachRunBests(const std::string& gpu_model, std::span<const RunKey> runs,
                                       std::span<const GemmKey> keys,
                                       const tuner::MeasureMode& mode, tuner::AlgoChoice algo,
                                       TakeRunBests take) = 0;
  // Every run on software `software_id` with a verified result on
  // `gpu_model` in `mode`, newest first (RunBest's run and started_us; no
  // figures): one index seek per run, not per row.
  virtual absl::StatusOr<std::vector<RunBest>> ListRuns(const std::string& gpu_model,
                                                        int64_t software_id,
                                                        const tuner::MeasureMode& mode) = 0;
  // The job, device and software of each run, in the order given. NotFound
  // names a run whose device or software is not in the database.
  virtual absl::StatusOr<std::vector<RunRecord>> DescribeRuns(std::span<const RunKey> runs) = 0;

  // ---- comparisons and revalidation (crest compare, sweep --revalidate)
  // For each GPU model and GEMM that the runs `filter` selects measured in
  // `filter.mode`, the newest such run's answer (`filter.algo`): the run
  // started last, then the largest job, device and software ids; within a
  // run, its fastest row. Chosen in SQL, so the answer holds one entry per
  // GEMM however many runs measured it (with filter.each_device, one per
  // GEMM, device and cuBLASLt version); in no particular order.
  // ResourceExhausted when it would hold more than `filter.limit` answers.
  virtual absl::StatusOr<std::vector<SelectedBest>> NewestRunBests(const RunFilter& filter) = 0;
  // A GEMM's `count` fastest distinct verified algorithms on `gpu_model` in
  // `mode` under every software version but `except_software_id`, fastest
  // first (an algorithm by its configuration; its stored bytes kept).
  // Empty when no other version measured the GEMM.
  virtual absl::StatusOr<std::vector<tuner::AlgoIdentity>> StoredTopAlgos(
      const std::string& gpu_model, const GemmKey& key, const tuner::MeasureMode& mode,
      int64_t except_software_id, int count) = 0;

  // ---- races of a study's leading candidates (sweep/runner.h)
  // Stores a race with its standings and every round's times; returns its id.
  virtual absl::StatusOr<int64_t> InsertRace(const RaceRecord& race) = 0;
  // The newest race of `study` that the run of job `job_id` (0: outside
  // any job) on device `device_uuid` made in `mode` and `algo`, with its
  // standings (times only when `with_times`); nullopt when it raced none.
  // (A job runs on one device, the one its target names.)
  virtual absl::StatusOr<std::optional<RaceRecord>> FindRace(
      int64_t job_id, const std::string& device_uuid, const std::string& study,
      const tuner::MeasureMode& mode, tuner::AlgoChoice algo, bool with_times) = 0;

  // ---- timings imported from other tools (never answers; calibration input;
  // admin.h's Import adds them)
  // Every imported timing on `gpu_model`, with where it came from.
  struct ImportedRow {
    ImportedTiming timing;
    std::string device;
    std::string tool;
    std::string source_file;
  };
  virtual absl::StatusOr<std::vector<ImportedRow>> ImportedTimings(
      const std::string& gpu_model) = 0;

  // (Export, merge, check, stats and import: admin.h, beside the store.)

  // Moves whenever a measurement or a prediction for `gpu_model` is added or
  // deleted, by this or any other connection or process (triggers keep it;
  // results are never updated): an answer computed from that GPU's results
  // at one generation holds until it moves.
  virtual absl::StatusOr<ResultsGeneration> Generation(const std::string& gpu_model) = 0;
  // The newest result ids over every GPU model: moves with every measurement
  // or prediction added, by any connection. Stats' result counts computed at
  // one latest generation hold until it moves (crestd keeps them so).
  virtual absl::StatusOr<ResultsGeneration> LatestGeneration() = 0;

  // ---- one snapshot for many reads (ReadSnapshot below holds one)
  // Begins a read transaction: until the matching EndRead, every read sees
  // the database as it was at the first of them, whatever other
  // connections commit meanwhile, and SQLite takes its locks once instead
  // of once a statement. Pairs nest; the outermost one holds the snapshot.
  // A write inside one is refused (FailedPrecondition): answers only read.
  virtual absl::Status BeginRead() = 0;
  virtual void EndRead() = 0;
};

// Holds one read snapshot of `store` for a scope (BeginRead … EndRead):
// the reads of one answer see one state of the database, so an answer never
// mixes rows from before and after a sweep's commit. Where BeginRead fails,
// each read runs in its own transaction as without one, and the first that
// cannot read reports why.
class ReadSnapshot final {
 public:
  explicit ReadSnapshot(Store& store) : store_(store), held_(store.BeginRead().ok()) {}
  ~ReadSnapshot() {
    if (held_) store_.EndRead();
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  Store& store_;
  const bool held_;
};

}  // namespace crest::store
