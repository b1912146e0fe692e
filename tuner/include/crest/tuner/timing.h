// Where a time Crest reports came from, and how the rankings ask for times.
//
// A candidate of a question (a d_ff's MLP, a vocabulary's logits GEMM and
// its gradients, a model's layer) is several GEMMs. Its time is a sum, and a
// sum is only as true as its parts belong together: measured parts come from
// one run (one sweep job, in one GPU state) or from a pool of runs that the
// Timing names; a sum of two kinds of number is Source::kMixed, never hidden.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/tuner/device_info.h"
#include "crest/tuner/gemm.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/source.h"

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

// Times one GEMM.
using GemmTimer = std::function<absl::StatusOr<Timing>(const GemmShape&)>;

// Times GEMMs that belong together: one Timing per GEMM, in the order
// given. An answering source gives every measured Timing of one call from
// one run (or one pool of runs). NotFound: nothing answers the set.
using GemmSetTimer = std::function<absl::StatusOr<std::vector<Timing>>(std::span<const GemmShape>)>;

// What a Timing says of where it comes from, beside its figures and kind:
// the same for every sum of one run (or one pool, or one model version), so
// a sum shares it and a ranking copies it only into the rows it shows.
struct TimingLabels {
  std::string provenance;
  DeviceInfo device;
  SoftwareInfo software;
  std::vector<RunInfo> runs;
};
// Copies `labels` into `into`: a Timing, or anything else that carries a
// time's labels under the same names (a d_ff row).
template <typename T>
void CopyLabels(const TimingLabels& labels, T& into) {
  into.provenance = labels.provenance;
  into.device = labels.device;
  into.software = labels.software;
  into.runs = labels.runs;
}

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
// The sum as a Timing, its labels copied.
Timing TimingOf(const SetSum& sum);
// `t` as a set sum, its labels moved into new shared ones.
SetSum SetSumOf(Timing t);
// `figures`' time, interval, kind and pooling with `labels` (the strings and
// runs of `figures` are not read).
SetSum SetSumOf(const Timing& figures, std::shared_ptr<const TimingLabels> labels);

// The sum of a set's times: exactly SumTimings(timer(set)) of the source's
// GemmSetTimer (TimingOf it), for a source that can give it without a
// Timing per GEMM, and without a copy of its labels per set.
using GemmSetSummer = std::function<absl::StatusOr<SetSum>(std::span<const GemmShape>)>;

// The sum of `parts`: times and intervals add (a part without an interval
// counts as exact); the source is the parts' common one, else kMixed; the
// first part's provenance, device and software are kept; runs are the union,
// in order of first appearance.
Timing SumTimings(std::span<const Timing> parts);
// One step of SumTimings: adds `part` to `sum` (`first`: it is the sum's
// first part, whose kind, provenance, device and software the sum takes).
void AddTiming(Timing& sum, const Timing& part, bool first);

// A run's time: the median and its 95% interval (a measurement without
// one, ci_high_us 0, is exact: the median itself), on `device` with
// `software`: measured, or replayed when the device is the replay backend's
// simulated GPU (DeviceInfo::replay).
// The kind of a time measured on `device`: replayed on the replay backend's
// simulated GPU (DeviceInfo::replay), else measured.
Source MeasuredSource(const DeviceInfo& device);
Timing MeasuredTiming(double median_us, double ci_low_us, double ci_high_us,
                      const DeviceInfo& device = {}, const SoftwareInfo& software = {});
// MeasuredTiming's time and interval set in `t`, the rest of it as it is:
// for a sum that adds many measured parts through one Timing.
void SetMeasuredFigures(Timing& t, double median_us, double ci_low_us, double ci_high_us);

// The ends of a time's interval, the time itself where it has none (0).
double LowOf(const Timing& t);
double HighOf(const Timing& t);
double LowOf(const SetSum& s);
double HighOf(const SetSum& s);

// Whether two runs are one: the same job (id and uid) on the same device.
bool SameRun(const RunInfo& a, const RunInfo& b);

// A predicted time: its interval time × (1 ± expected_error), the model's
// error for the GEMM's class on held-out windows (ModelParams::
// expected_error), labelled with the model version.
Timing PredictedTiming(double time_us, double expected_error, std::string model_version);

// Adds to `into` each run of `runs` it does not hold yet (SameRun),
// keeping first appearance order.
void MergeRuns(std::vector<RunInfo>& into, std::span<const RunInfo> runs);

// A set timer that asks `timer` for each GEMM on its own: right only for a
// source whose answers are all of one kind and need no run (the model).
GemmSetTimer EachGemm(GemmTimer timer);

// A timer that answers with the predictor for `gpu` (the model version and
// calibration in force), each time's interval its expected error.
GemmTimer PredictorTimer(const GpuSpec& gpu);

// "job 3 'dff-h4096' (2026-11-23 09:27 UTC)": how answers name a run.
std::string DescribeRun(const RunInfo& run);

}  // namespace crest::tuner
