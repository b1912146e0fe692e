#include "crest/tuner/timing.h"

#include <algorithm>
#include <ctime>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest {

Timing SumTimings(std::span<const Timing> parts) {
  Timing sum;
  bool first = true;
  for (const Timing& t : parts) {
    sum.time_us += t.time_us;
    sum.low_us += t.low_us > 0 ? t.low_us : t.time_us;
    sum.high_us += t.high_us > 0 ? t.high_us : t.time_us;
    sum.pooled = sum.pooled || t.pooled;
    for (const RunInfo& run : t.runs) {
      const bool known = std::any_of(sum.runs.begin(), sum.runs.end(), [&](const RunInfo& r) {
        return r.job_uid == run.job_uid && r.job_id == run.job_id &&
               r.device_uuid == run.device_uuid;
      });
      if (!known) sum.runs.push_back(run);
    }
    if (first) {
      first = false;
      sum.source = t.source;
      sum.provenance = t.provenance;
      sum.device = t.device;
      sum.software = t.software;
    } else if (sum.source != t.source) {
      sum.source = Source::kMixed;
    }
  }
  return sum;
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
    Timing t;
    t.time_us = p->time_us;
    // Candidates within the model's expected error of each other are tied.
    t.low_us = p->time_us * (1 - p->expected_error / 2);
    t.high_us = p->time_us * (1 + p->expected_error / 2);
    t.source = Source::kPredicted;
    t.provenance = std::string(p->model_version);
    return t;
  };
}

std::string DescribeRun(const RunInfo& run) {
  if (run.job_id == 0 && run.job_uid.empty()) {
    return StrCat("measurements outside any job on ", run.device_uuid);
  }
  std::string out = StrCat("job ", run.job_id);
  if (!run.name.empty()) out += StrCat(" '", run.name, "'");
  if (run.started_us > 0) {
    const auto seconds = static_cast<std::time_t>(run.started_us / 1000000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
    out += StrCat(" (", when, ")");
  }
  return out;
}

}  // namespace crest
