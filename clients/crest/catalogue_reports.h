// Internal to the crest CLI: what `crest gpus`, `calibrate` and `doctor`
// report, one type each, printed by the printers (printer.h) like the
// answers of results.h. `crest shapes`' report is shapes_report.h (its
// attention FLOPs bring the times' types, which these do not need).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crest/tuner/calibration.h"
#include "crest/tuner/dtype.h"
#include "crest/tuner/gpu_catalogue.h"

namespace crest::cli {

// `crest gpus`
struct GpusReport {
  std::vector<const tuner::GpuSpec*> gpus;
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
