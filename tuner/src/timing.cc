#include <algorithm>
#include <memory>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"
#include "crest/tuner/timing_ops.h"

namespace crest::tuner {

Timing SumTimings(std::span<const Timing> parts) {
  Timing sum;
  bool first = true;
  for (const Timing& t : parts) {
    AddTiming(sum, t, first);
    first = false;
  }
  return sum;
}

void AddTiming(Timing& sum, const Timing& t, bool first) {
  sum.time_us += t.time_us;
  sum.low_us += LowOf(t);
  sum.high_us += HighOf(t);
  sum.pooled = sum.pooled || t.pooled;
  MergeRuns(sum.runs, t.runs);
  if (first) {
    sum.source = t.source;
    sum.provenance = t.provenance;
    sum.device = t.device;
    sum.software = t.software;
  } else if (sum.source != t.source) {
    sum.source = Source::kMixed;
  }
}

Timing TimingOf(const SetSum& sum) {
  Timing t;
  t.time_us = sum.time_us;
  t.low_us = sum.low_us;
  t.high_us = sum.high_us;
  t.source = sum.source;
  t.pooled = sum.pooled;
  if (sum.labels != nullptr) CopyLabels(*sum.labels, t);
  return t;
}

SetSum SetSumOf(Timing t) {
  auto labels = std::make_shared<TimingLabels>();
  labels->provenance = std::move(t.provenance);
  labels->device = std::move(t.device);
  labels->software = std::move(t.software);
  labels->runs = std::move(t.runs);
  return SetSumOf(t, std::move(labels));
}

SetSum SetSumOf(const Timing& figures, std::shared_ptr<const TimingLabels> labels) {
  return SetSum{figures.time_us, figures.low_us, figures.high_us,
                figures.source,  figures.pooled, std::move(labels)};
}

void MergeRuns(std::vector<RunInfo>& into, std::span<const RunInfo> runs) {
  for (const RunInfo& run : runs) {
    const bool known =
        std::any_of(into.begin(), into.end(), [&](const RunInfo& r) { return SameRun(r, run); });
    if (!known) into.push_back(run);
  }
}

Source MeasuredSource(const DeviceInfo& device) {
  return device.replay.empty() ? Source::kMeasured : Source::kReplayed;
}

Timing MeasuredTiming(double median_us, double ci_low_us, double ci_high_us,
                      const DeviceInfo& device, const SoftwareInfo& software) {
  Timing t;
  SetMeasuredFigures(t, median_us, ci_low_us, ci_high_us);
  t.source = MeasuredSource(device);
  t.device = device;
  t.software = software;
  return t;
}

void SetMeasuredFigures(Timing& t, double median_us, double ci_low_us, double ci_high_us) {
  t.time_us = median_us;
  t.low_us = ci_high_us > 0 ? ci_low_us : median_us;
  t.high_us = ci_high_us > 0 ? ci_high_us : median_us;
}

namespace {

// An end of an interval, the time itself where it has none (0).
double EndOr(double end_us, double time_us) { return end_us > 0 ? end_us : time_us; }

}  // namespace

double LowOf(const Timing& t) { return EndOr(t.low_us, t.time_us); }
double HighOf(const Timing& t) { return EndOr(t.high_us, t.time_us); }
double LowOf(const SetSum& s) { return EndOr(s.low_us, s.time_us); }
double HighOf(const SetSum& s) { return EndOr(s.high_us, s.time_us); }

Timing PredictedTiming(double time_us, double expected_error, std::string model_version) {
  Timing t;
  t.time_us = time_us;
  t.low_us = time_us * (1 - expected_error);
  t.high_us = time_us * (1 + expected_error);
  t.source = Source::kPredicted;
  t.provenance = std::move(model_version);
  return t;
}

GemmSetTimer EachGemm(GemmTimer timer) {
  return [timer = std::move(timer)](
             std::span<const GemmShape> gemms) -> absl::StatusOr<std::vector<Timing>> {
    std::vector<Timing> out;
    out.reserve(gemms.size());
    for (const GemmShape& g : gemms) {
      auto t = timer(g);
      if (!t.ok()) return t.status();
      out.push_back(*std::move(t));
    }
    return out;
  };
}

GemmTimer PredictorTimer(const GpuSpec& gpu) {
  return [&gpu](const GemmShape& g) -> absl::StatusOr<Timing> {
    auto p = Predict(g, gpu);
    if (!p.ok()) return p.status();
    return PredictedTiming(p->time_us, p->expected_error, std::string(p->model_version));
  };
}

}  // namespace crest::tuner
