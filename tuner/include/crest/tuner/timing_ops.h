// What answers do with times: sum them, make them, bound them, merge their
// runs. Apart from the types (timing.h), which every file that holds a time
// includes, so that a change here rebuilds only the files that call these.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "crest/tuner/device_info.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/source.h"
#include "crest/tuner/timing.h"

namespace crest::tuner {

// Copies `labels` into `into`: a Timing, or anything else that carries a
// time's labels under the same names (a d_ff row).
template <typename T>
void CopyLabels(const TimingLabels& labels, T& into) {
  into.provenance = labels.provenance;
  into.device = labels.device;
  into.software = labels.software;
  into.runs = labels.runs;
}

// The sum as a Timing, its labels copied.
Timing TimingOf(const SetSum& sum);
// `t` as a set sum, its labels moved into new shared ones.
SetSum SetSumOf(Timing t);
// `figures`' time, interval, kind and pooling with `labels` (the strings and
// runs of `figures` are not read).
SetSum SetSumOf(const Timing& figures, std::shared_ptr<const TimingLabels> labels);

// The sum of `parts`: times and intervals add (a part without an interval
// counts as exact); the source is the parts' common one, else kMixed; the
// first part's provenance, device and software are kept; runs are the union,
// in order of first appearance.
Timing SumTimings(std::span<const Timing> parts);
// One step of SumTimings: adds `part` to `sum` (`first`: it is the sum's
// first part, whose kind, provenance, device and software the sum takes).
void AddTiming(Timing& sum, const Timing& part, bool first);
// AddTiming's figures, kind and pooling only: for a sum whose labels
// (provenance, device, software, runs) are kept apart (tuner::SetSum).
void AddFigures(Timing& sum, const Timing& part, bool first);

// The kind of a time measured on `device`: replayed on the replay backend's
// simulated GPU (DeviceInfo::replay), else measured.
Source MeasuredSource(const DeviceInfo& device);
// A run's time: the median and its 95% interval (a measurement without
// one, ci_high_us 0, is exact: the median itself), on `device` with
// `software`, of MeasuredSource(device)'s kind.
Timing MeasuredTiming(double median_us, double ci_low_us, double ci_high_us,
                      const DeviceInfo& device = {}, const SoftwareInfo& software = {});
// AddFigures(sum, part) for a part MeasuredTiming would make of these
// figures, of kind `source` and pooled or not, without making it: for a
// sum of many measured parts whose labels are kept apart (its `labels`
// are left as they are).
void AddMeasured(SetSum& sum, double median_us, double ci_low_us, double ci_high_us, Source source,
                 bool pooled, bool first);

// The ends of a time's interval, the time itself where it has none (0).
double LowOf(const Timing& t);
double HighOf(const Timing& t);
double LowOf(const SetSum& s);
double HighOf(const SetSum& s);

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

}  // namespace crest::tuner
