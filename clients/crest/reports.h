// Internal to the crest CLI: what the commands that are not answers report
// (the catalogue, shapes, jobs, sweeps, database files, the fleet, a
// calibration, the node's health), one type each, printed by the printers
// (printer.h) like the answers of results.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crest/answers/compare.h"
#include "crest/answers/fleet_health.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/sweep/sweep_report.h"
#include "crest/tuner/attention.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/model_config.h"
#include "crest/v1/crest.pb.h"
#include "nlohmann/json.hpp"

namespace crest::cli {

// `crest gpus`
struct GpusReport {
  std::vector<const tuner::GpuSpec*> gpus;
};

// `crest shapes`
struct ShapesReport {
  tuner::ModelConfig config;
  bool train = false;
  bool fused_attention = true;          // the attention core as one FlashAttention kernel
  std::vector<tuner::GemmShape> gemms;  // fused: without attn_score and attn_value
  // Fused: the core's FLOPs (causal; backward only with train), listed in
  // the table where its two GEMMs would be (before gemms[attention_at]).
  tuner::AttentionFlops attention;
  size_t attention_at = 0;
  double layer_flops = 0;   // one layer on one rank: its GEMMs and the fused core
  double logits_flops = 0;  // the logits GEMMs, once per model
  std::vector<std::string> warnings;
};

// `crest jobs show|submit|cancel`: one job of a crestd.
struct JobReport {
  v1::Job job;
  bool detailed = false;  // show: every field; else one line
  std::string note;       // e.g. "(stops before its next GEMM)"
};

// `crest jobs list`
struct JobListReport {
  std::vector<v1::Job> jobs;
  int64_t next_before_id = 0;  // > 0: more jobs older than these (`--before`)
};

// `crest jobs watch`, `jobs submit --wait`, `crest sweep --server`: a job's
// last event when it ended.
struct JobEventReport {
  v1::JobEvent event;
  std::string server;  // sweeps: the crestd that ran it; empty for watch
};

// `crest sweep`: a sweep's end, run here (--db) or by a crestd (--server,
// rebuilt from the job's final event), printed the same way.
struct SweepReport {
  sweep::SweepReport sweep;
  std::string db;      // run here: the database file
  std::string server;  // run by a crestd: its address
};

// `crest db export|merge|check|stats|import`
struct DbExportReport {
  std::string from;      // the database, or "crestd at …"
  std::string snapshot;  // the file written
};
struct DbMergeReport {
  std::string into;
  std::vector<std::pair<std::string, store::MergeReport>> merged;  // per snapshot
};
struct DbCheckReport {
  std::string db;
  store::CheckReport check;
};
struct DbStatsReport {
  std::string db;
  store::DbStats stats;
};
struct DbImportReport {
  std::string db;
  std::string file;
  std::string gpu_model;
  std::string device;
  std::string tool;
  int64_t rows = 0;
  int64_t added = 0;
};

// `crest fleet submit|pull`: one row per node.
struct FleetNodeReport {
  std::string target;
  bool ok = false;
  std::string error;
  v1::Job job;                // submit
  int64_t bytes = 0;          // pull: the snapshot's size
  store::MergeReport merged;  // pull
};
struct FleetReport {
  bool pull = false;
  std::string into;  // pull: the catalogue
  std::vector<FleetNodeReport> nodes;
  // pull: the catalogue's devices against their fleet, or why not
  std::optional<answers::FleetHealth> health;
  std::string health_error;
};

// `crest compare --fleet`: every device of a catalogue against the fleet
// median of its GPU model (answers/fleet_health.h).
struct FleetHealthResult {
  answers::FleetHealth health;
  std::string origin;  // the database
};

// `crest compare`: two selections of runs, GEMM by GEMM (answers/compare.h),
// from a database or a crestd.
struct CompareResult {
  answers::CompareReport report;
  std::string origin;    // the database or "crestd at HOST:PORT"
  int64_t left_out = 0;  // GEMMs a crestd compared but did not list (its limit)
};

// `crest calibrate`
struct CalibrateReport {
  tuner::Calibration calibration;
  tuner::ModelParams before;  // the parameters the fit started from, rates explicit
  std::string path;           // the calibration file written
};

// `crest calibrate --check`: the model in force judged against a
// database's rows, nothing fitted.
struct CalibrationCheckReport {
  std::string db;
  std::string gpu;
  tuner::DType dtype = tuner::DType::kBf16;
  std::string source;         // the rows: all, measured or imported
  std::string model_version;  // as predictions carry it
  std::string model;          // in words (calibrated, transferred or defaults)
  tuner::FitMetrics metrics;
};

// `crest doctor`
struct DoctorReport {
  enum class Verdict { kOk, kWarn, kFail };
  struct Check {
    std::string name;
    Verdict verdict = Verdict::kOk;
    std::string detail;
  };
  std::vector<Check> checks;
  bool no_gpu = false;  // the node only predicts: no GPU checks
  size_t Failed() const;
  size_t Warned() const;
};
const char* VerdictText(DoctorReport::Verdict verdict);

}  // namespace crest::cli
