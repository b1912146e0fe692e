// The rows of a Crest database, as C++ values.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/measurement.h"
#include "crest/tuner/race_standing.h"

namespace crest::store {

// What identifies a GEMM result, apart from the GPU: input type, layout
// and sizes.
struct GemmKey {
  tuner::DType dtype = tuner::DType::kBf16;  // input type
  bool a_transposed = false;
  bool b_transposed = true;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;

  static GemmKey Of(const tuner::GemmShape& gemm);
  // The GEMM it keys, unnamed, forward pass.
  tuner::GemmShape Shape() const;
  auto operator<=>(const GemmKey&) const = default;
};

enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };
std::string_view JobStateName(JobState state);  // "queued", "running", …
std::optional<JobState> ParseJobState(std::string_view text);

struct JobRecord {
  int64_t id = 0;
  std::string uid;           // globally unique; survives merges
  std::string host;          // where the job ran
  std::string spec;          // canonical JSON of the sweep spec (empty in listings)
  std::string submitted_by;  // the client that created it: a token's name, or a peer address
  std::string backend;       // "model", "cublaslt"
  std::string target;        // catalogue GPU (model) or device UUID (measured)
  JobState state = JobState::kQueued;
  int64_t total = 0;  // GEMMs in the plan
  int64_t done = 0;   // GEMMs with a committed result
  int priority = 0;   // larger runs first
  int64_t created_us = 0;
  std::optional<int64_t> started_us;
  std::optional<int64_t> finished_us;
  std::string error;
};

struct PredictionRow {
  std::string gpu_model;
  std::string model_version;
  GemmKey key;
  double time_us = 0;
  double tflops = 0;
  int tile_m = 0;
  int tile_n = 0;
  int64_t tiles = 0;
  int64_t waves = 0;
  double tile_efficiency = 0;
  double wave_efficiency = 0;
  double alignment_factor = 0;
  double expected_error = 0;  // the model's typical relative error (0: not recorded)
  std::string bound;          // "compute" or "memory"
  std::string host;
  int64_t created_us = 0;
};

struct MeasurementRow {
  int64_t id = 0;
  std::optional<int64_t> job_id;
  tuner::DeviceInfo device;
  tuner::SoftwareInfo software;
  GemmKey key;
  int64_t lda = 0;
  int64_t ldb = 0;
  int64_t ldc = 0;
  std::string dtype_out;
  std::string compute_type;
  tuner::AlgoResult result;  // identity, statistics, verification, TFLOP/s
  int64_t tiles = 0;
  int64_t waves = 0;
  double tile_efficiency = 0;
  double wave_efficiency = 0;
  tuner::MeasureMode mode;       // cache mode and clock policy
  double settled_clock_mhz = 0;  // the clock the policy judged samples by; 0 unknown
  int64_t created_us = 0;
};

// One run: the measurements one job made on one device with one software
// version. Rows written outside any job (job_id 0) form one run per device
// and software. A run's figures were taken together, in one GPU state;
// figures of different runs are never summed into one answer unpooled.
struct RunKey {
  int64_t job_id = 0;
  int64_t device_id = 0;
  int64_t software_id = 0;
  auto operator<=>(const RunKey&) const = default;
};

// A run's fastest verified algorithm for one GEMM.
struct RunBest {
  RunKey run;
  double median_us = 0;
  double ci_low_us = 0;  // the 95% interval of that median; 0 when the row predates intervals
  double ci_high_us = 0;
  int64_t measurement_id = 0;
  int64_t started_us = 0;  // when the run's job was created (0: outside any job): newer first
};

// A study's leading candidates timed against each other in interleaved
// rounds on one device, after a sweep's per-GEMM pass.
struct RaceRecord {
  int64_t id = 0;
  std::optional<int64_t> job_id;  // the sweep it followed
  int64_t device_id = 0;
  int64_t software_id = 0;
  std::string gpu_model;
  tuner::MeasureMode mode;
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;  // which algorithm of each GEMM ran
  std::string study;                                  // the study's key (DffStudyKey)
  double resolution = 0;
  // Family-wise error rate of its verdicts; 0: the first, uncorrected procedure.
  double error_rate = 0;
  int rounds = 0;
  int retaken = 0;
  double warmup_s = 0;
  bool settled = false;
  double seconds = 0;
  std::string stop_reason;
  int64_t created_us = 0;
  std::vector<tuner::RaceStanding> entries;  // leader first, then by ratio
  std::vector<std::vector<double>> times;    // [round][candidate] µs; 0 = not timed
};

// What an answer says about a run.
struct RunRecord {
  RunKey key;
  tuner::RunInfo info;
  tuner::DeviceInfo device;
  tuner::SoftwareInfo software;
};

// GEMM timings another tool made, as `crest db import` stores them: never
// measurements of Crest's engine, and never answers to lookups.
struct ImportedTiming {
  GemmKey key;
  double time_us = 0;
};
struct ImportBatch {
  std::string gpu_model;    // catalogue name
  std::string device;       // as the file (or the user) names it
  std::string tool;         // the tool and how it timed, in words
  std::string source_file;  // the file's name
  std::string source_hash;  // of its content: importing it again adds nothing
  std::vector<ImportedTiming> rows;
};

// Which runs a comparison reads (`crest compare`'s selectors); unset fields
// match any. A run's time is its job's creation (rows written outside any
// job: the row's own).
struct RunFilter {
  std::optional<std::string> gpu_model;
  std::optional<int64_t> job_id;  // 0: rows written outside any job
  std::optional<int64_t> cublaslt;
  std::optional<int64_t> except_software_id;  // every software version but this one
  std::optional<std::string> device_uuid;
  std::optional<std::string> host;
  std::optional<int64_t> from_us;  // runs at or after
  std::optional<int64_t> to_us;    // runs before
  tuner::MeasureMode mode;
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;
  // At most this many GEMMs answered (0: no limit); more is ResourceExhausted.
  int64_t limit = 0;
  // One answer per GEMM, device and cuBLASLt version instead of per GEMM
  // (a fleet's devices set side by side); `limit` then counts those.
  bool each_device = false;
};

// The newest selected run's answer for one GEMM of one GPU model: what a
// comparison sets side by side (the run's device and software once per run:
// DescribeRuns).
struct SelectedBest {
  std::string gpu_model;
  GemmKey key;
  RunBest best;
  tuner::AlgoIdentity algo;  // its configuration; the raw bytes are not read
  int64_t samples = 0;
};

// Restricts lookups to software versions; unset fields match any.
struct SoftwarePin {
  std::optional<int64_t> cublaslt;
  std::optional<int64_t> cuda_runtime;
  std::optional<std::string> driver;
};

// The newest result ids of one GPU model: see Store::Generation.
struct ResultsGeneration {
  int64_t measurement_id = 0;
  int64_t prediction_id = 0;
  int64_t deletions = 0;  // results (or races) of the GPU model deleted, by any process
  int64_t race_id = 0;    // the newest race of the GPU model (they reorder its d_ff answers)
  bool operator==(const ResultsGeneration&) const = default;
};

}  // namespace crest::store
