// Internal to the crest CLI: what `crest gpus`, `shapes`, `calibrate` and
// `doctor` report, one type each, printed by the printers (printer.h) like
// the answers of results.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "crest/tuner/attention.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/dtype.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/model_config.h"

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
