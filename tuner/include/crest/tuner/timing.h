// Where a time Crest reports came from.
//
// A candidate of a question (a d_ff's MLP, a vocabulary's logits GEMM and
// its gradients, a model's layer) is several GEMMs. Its time is a sum, and a
// sum is only as true as its parts belong together: measured parts come from
// one run (one sweep job, in one GPU state) or from a pool of runs that the
// Timing names; a sum of two kinds of number is Source::kMixed, never hidden.
//
// The types only. What answers do with them (sums, bounds, merging runs) is
// timing_ops.h, so that a change there rebuilds only the files that call
// it. How the rankings ask for times is timers.h (included here), so that a
// ranking's header names the timers without these types, and a change here
// rebuilds only the files that hold a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/source.h"
#include "crest/tuner/timers.h"  // GemmTimer, GemmSetTimer, GemmSetSummer

namespace crest::tuner {

struct Timing {
  double time_us = 0;
  // The interval the time is known within (measured: the 95% interval of
  // the median, summed over GEMMs; pooled: covering the runs' spread;
  // predicted: the model's expected error); 0 when unknown, i.e. time_us.
  double low_us = 0;
  double high_us = 0;
  Source source = Source::kPredicted;
  std::string provenance;  // model version, or device, software and mode in words
  DeviceInfo device;       // measured only (pooled: the first run's)
  SoftwareInfo software;   // measured only (pooled: the first run's)
  // Measured: the run the time comes from, or every run of a pool. Empty
  // for predictions.
  std::vector<RunInfo> runs;
  bool pooled = false;  // the median over runs (`--runs all`), not one run's
};

// What a Timing says of where it comes from, beside its figures and kind:
// the same for every sum of one run (or one pool, or one model version), so
// a sum shares it and a ranking copies it only into the rows it shows.
struct TimingLabels {
  std::string provenance;
  DeviceInfo device;
  SoftwareInfo software;
  std::vector<RunInfo> runs;
};

// A set's sum as a GemmSetSummer gives it: a Timing's figures, kind and
// pooling, its labels shared.
struct SetSum {
  double time_us = 0;
  double low_us = 0;
  double high_us = 0;
  Source source = Source::kPredicted;
  bool pooled = false;
  std::shared_ptr<const TimingLabels> labels;  // null: none (as a Timing's empty strings)
};

}  // namespace crest::tuner
