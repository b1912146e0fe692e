// The one place where sweep backends are made, for `crest sweep` and crestd
// alike, so that the same spec runs the same way wherever it runs.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "crest/measure/options.h"
#include "crest/tuner/backend.h"

namespace crest::sweep {

// The replay backend's table and how it is replayed (docs/replay.md).
struct ReplayChoice {
  std::string file;  // the recorded table: the CSV `crest db import` reads
  // Each launch's relative standard deviation [0, 0.5]; the default is about
  // the median CV of the shipped aligned-GEMM samples (2.2%).
  double noise = 0.02;
  uint64_t seed = 1;
  std::string trace;  // an nvidia-smi clock trace whose drift it follows; empty none
  // The cuBLASLt version the table stands for (a table recorded before and
  // after a library upgrade, replayed to rehearse a revalidation); its runs
  // are stored under software ("replay", 0, cublaslt). 0: none.
  int64_t cublaslt = 0;
};

struct BackendChoice {
  std::string name;                 // "model", "cublaslt" or "replay"
  std::string gpu;                  // model: the catalogued GPU it predicts for; replay:
                                    // the GPU the table was recorded on (if it does not say)
  int device = 0;                   // cublaslt: the CUDA device index
  measure::MeasureOptions measure;  // cublaslt, replay: the method (a spec's "measure")
  ReplayChoice replay;
};

// InvalidArgument for an unknown backend, a missing or unknown GPU (model)
// or invalid measure or replay options; FailedPrecondition when the cuBLASLt
// backend is not built into this binary or the device is missing; NotFound
// when the replay table cannot be read.
absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeBackend(const BackendChoice& choice);

}  // namespace crest::sweep
