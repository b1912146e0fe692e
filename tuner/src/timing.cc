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

namespace {

// A part's time and interval ends (0: none, the time itself).
struct Figures {
  double time_us = 0, low_us = 0, high_us = 0;
};

// A measured part's figures: the median, and its interval where it has one.
Figures MeasuredFigures(double median_us, double ci_low_us, double ci_high_us) {
  return {median_us, ci_high_us > 0 ? ci_low_us : median_us,
          ci_high_us > 0 ? ci_high_us : median_us};
}

// An end of an interval, the time itself where it has none (0).
double EndOr(double end_us, double time_us) { return end_us > 0 ? end_us : time_us; }

// Adds a part's figures, kind and pooling to `sum` (a Timing or a SetSum).
template <typename Sum>
void AddPart(Sum& sum, const Figures& part, Source source, bool pooled, bool first) {
  sum.time_us += part.time_us;
  sum.low_us += EndOr(part.low_us, part.time_us);
  sum.high_us += EndOr(part.high_us, part.time_us);
  sum.pooled = sum.pooled || pooled;
  if (first) {
    sum.source = source;
  } else if (sum.source != source) {
    sum.source = Source::kMixed;
  }
}

}  // namespace

void AddFigures(Timing& sum, const Timing& t, bool first) {
  AddPart(sum, {t.time_us, t.low_us, t.high_us}, t.source, t.pooled, first);
}

void AddMeasured(SetSum& sum, double median_us, double ci_low_us, double ci_high_us, Source source,
                 bool pooled, bool first) {
  AddPart(sum, MeasuredFigures(median_us, ci_low_us, ci_high_us), source, pooled, first);
}

void AddTiming(Timing& sum, const Timing& t, bool first) {
  AddFigures(sum, t, first);
  MergeRuns(sum.runs, t.runs);
  if (first) {
    sum.provenance = t.provenance;
    sum.device = t.device;
    sum.software = t.software;
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
  const Figures f = MeasuredFigures(median_us, ci_low_us, ci_high_us);
  t.time_us = f.time_us;
  t.low_us = f.low_us;
  t.high_us = f.high_us;
  t.source = MeasuredSource(device);
  t.device = device;
  t.software = software;
  return t;
}

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
