// Calibrations of the predictor: tilewave-2's parameters fitted for one GPU
// model and dtype (calibration_fit.h), with how well they fit and where the
// measurements came from. A calibration is a versioned JSON file that
// `crest calibrate` writes and crest, crestd and the Python client read;
// calibrations shipped for catalogued GPUs are built into the binaries from
// tuner/calibrations/*.json. docs/predictor.md describes the format.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/dtype.h"
#include "crest/tuner/gpu_catalogue.h"
#include "nlohmann/json_fwd.hpp"

namespace crest::tuner {

// 2 added parameters.fallback_k_residue (optional; a version 1 file reads
// with every factor 1). 3 keeps parameters.expected_error by error class
// (kErrorClasses; a version 1 or 2 file's {fast, fallback} reads with the
// fast figure for every fast class) and adds fit.interval.
inline constexpr int kCalibrationSchemaVersion = 3;

// How well a model fits one SwiGLU MLP d_ff window found among the rows:
// candidates d_ff whose gate+up (tokens × 2f × hidden) and down
// (tokens × hidden × f) GEMMs were both timed.
struct StudyFit {
  int64_t tokens = 0;
  int64_t hidden = 0;
  int64_t candidates = 0;
  int64_t measured_best = 0;  // the d_ff with the least measured MLP time
  int64_t predicted_best = 0;
  // Measured MLP time of the predicted best over the measured best's, - 1.
  double best_gap = 0;
  double spearman = 0;      // predicted vs measured MLP time over the candidates
  double median_error = 0;  // median |predicted - measured| / measured MLP time
  // Share of the candidates whose measured MLP time lies within the
  // predicted one's interval (the sum of its GEMMs' intervals); the same for
  // the candidates whose d_ff is a multiple of 8 (-1: none).
  double coverage = 0;
  int64_t multiples_of_8 = 0;
  double coverage_multiples_of_8 = -1;
};

// A model's fit to a set of timed GEMMs.
struct FitMetrics {
  int64_t rows = 0;
  double spearman = 0;      // predicted vs measured GEMM time
  double median_error = 0;  // median |predicted - measured| / measured GEMM time
  std::vector<StudyFit> studies;
};

// The K-residue factors of one fallback input class (ModelParams::
// fallback_k_residue): fitted only where the pattern replicates, judged by
// splitting the rows into two halves of different K (K/128 even, odd) and
// correlating the factors each half gives by residue.
struct KResidueFit {
  int class_bytes = 0;   // the inputs' alignment: 2, 4 or 8 bytes
  int64_t rows = 0;      // fallback rows with both inputs along this class's K
  int residues = 0;      // residues mod 128 seen in both halves
  double agreement = 0;  // Pearson correlation of the halves' log factors
  bool fitted = false;   // agreement >= the threshold over enough residues
  double shrink = 0;     // the log factors' multiplier: split-half reliability 2r/(1+r)
  double low = 1;        // the fitted factors' range
  double high = 1;
};

// How a fit set its intervals (ModelParams::expected_error): each d_ff
// window among the rows left out in turn (every GEMM whose dimensions hold
// both its tokens and hidden size), the model refitted on the rest and its
// error on the window's GEMMs kept by error class; each class's half-width
// is that error's kIntervalQuantile quantile (a class with fewer than
// kMinClassErrors held-out GEMMs takes its family's, then the in-sample
// errors'). `coverage` is how often the intervals so set held the left-out
// windows' MLP times: an estimate from the same windows, not a guarantee.
struct IntervalFit {
  std::string
      basis;  // "held-out d_ff windows", or "the fit's own rows (no d_ff window to leave out)"
  int64_t windows = 0;     // windows left out
  int64_t gemms = 0;       // held-out GEMMs whose errors set the classes
  double quantile = 0;     // of |predicted - measured| / measured, per class
  int64_t candidates = 0;  // held-out MLP candidates
  double coverage = 0;
  int64_t multiples_of_8 = 0;  // of them, d_ff a multiple of 8
  double coverage_multiples_of_8 = 0;
};

struct CalibrationProvenance {
  std::string source;    // "measured" (Crest's engine), "imported" (another tool), or both
  std::string tool;      // imported rows: the tool and how it timed; measured: the method
  std::string device;    // as the driver names it, e.g. "NVIDIA H100 80GB HBM3"
  std::string software;  // driver, CUDA, cuBLASLt, framework as known
  std::string date;      // when the calibration was fitted, YYYY-MM-DD
  std::string database;  // the file the rows came from
  int64_t rows = 0;
};

struct Calibration {
  int schema_version = kCalibrationSchemaVersion;
  std::string gpu;  // catalogue name, e.g. "H100-SXM"
  DType dtype = DType::kBf16;
  std::string id;                   // "<gpu>-<dtype>-<YYYYMMDD>-<8 hex of the parameters>"
  std::string model_version;        // "tilewave-2+<id>": stored with its predictions
  std::string label;                // in words, as predictions cite it
  ModelParams params;               // every parameter, fitted or kept
  std::vector<std::string> fitted;  // the parameters the fit set; the rest are the defaults
  FitMetrics before;                // the model in force before the fit, on the same rows
  FitMetrics after;
  std::vector<KResidueFit> k_residue;  // one per class with rows
  IntervalFit interval;
  CalibrationProvenance provenance;
  // Empty for a calibration fitted to this GPU; else the id of the sibling's
  // calibration it was moved from (calibration_transfer.h).
  std::string transferred_from;
};

// The least and greatest interval half-width of one family's classes.
std::pair<double, double> ErrorRange(const ModelParams& params, bool fallback);
// The model's interval half-widths (ModelParams::expected_error) in words:
// "+/-1.4% to 5.2% (fast kernels), +/-3.2% (fallback)".
std::string DescribeErrors(const ModelParams& params);
// As calibration files write them: {"fast.16": …, "fallback": …}.
nlohmann::json ErrorsJson(const ModelParams& params);

// A fit's figures as the calibration file writes them (fit.before/after):
// rows, spearman, median_error and the studies.
nlohmann::json FitMetricsJson(const FitMetrics& metrics);

// Parses a calibration file's text. InvalidArgument names `origin` and the
// field (an unknown GPU or dtype, a newer schema, a missing parameter).
absl::StatusOr<Calibration> ParseCalibration(std::string_view json, std::string_view origin);
// The JSON text of a calibration (sorted keys, every field).
std::string CalibrationJson(const Calibration& calibration);
// Fills id, model_version and label from the other fields.
void NameCalibration(Calibration& calibration);

// ---- the calibrations in force in this process
// The shipped calibrations, then every file loaded; a later calibration for
// the same GPU and dtype replaces the earlier one. Thread-safe.
absl::Status LoadCalibrationFile(const std::string& path);
// The calibration in force for a GPU and dtype: its own, else one moved from
// a sibling GPU's (the same architecture and compute capability; one with
// the same SMs, clock and power first), else none (the catalogue's defaults).
std::shared_ptr<const Calibration> ActiveCalibration(std::string_view gpu, DType dtype);
// The calibrations fitted or loaded (never the transferred ones).
std::vector<std::shared_ptr<const Calibration>> ActiveCalibrations();
// Which dtypes of a GPU run on its own calibration and which on a sibling's
// (dtype names, in name order), and the id that sibling's came from.
struct CalibrationKinds {
  std::vector<std::string> calibrated;
  std::vector<std::string> transferred;
  std::string transferred_from;
};
CalibrationKinds CalibrationKindsOf(const GpuSpec& gpu);
// Names the model in force for a GPU: "calibrated (bf16, fp16); other
// dtypes: uncalibrated … defaults", "transferred from H100-SXM (bf16, fp16);
// …" or the catalogue's "uncalibrated … defaults".
std::string CalibrationState(const GpuSpec& gpu);
// The model in force for a GPU and dtype, in words: "tilewave-2+<id>
// (calibrated for bf16 from …)" or "tilewave-2 (uncalibrated Hopper defaults)".
std::string DescribeModel(const GpuSpec& gpu, DType dtype);
// The same for a given calibration; null: the GPU's uncalibrated defaults.
std::string DescribeModel(const GpuSpec& gpu, const Calibration* calibration);

}  // namespace crest::tuner
