#include "crest/answers/store_answers.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest::answers {

std::string DescribeProvenance(const DeviceInfo& d, const SoftwareInfo& s) {
  return StrCat(d.name, " ", d.uuid, " on ", d.host, "; driver ", s.driver, ", CUDA runtime ",
                s.cuda_runtime, ", cuBLASLt ", s.cublaslt);
}

absl::StatusOr<DffRanking> RankDffFromStore(const DffQuery& query, const GpuSpec& gpu,
                                            store::Store& db, const store::SoftwarePin& pin) {
  DffQuery q = query;
  q.skip_missing = true;
  auto plan = PlanDff(q);
  if (!plan.ok()) return plan.status();
  // Fetch every GEMM of the window in a few range scans.
  std::vector<store::GemmKey> keys;
  for (const auto& gemms : plan->gemms) {
    for (const auto& g : gemms) keys.push_back(store::GemmKey::Of(g));
  }
  const std::string model(gpu.name);
  auto measured = db.BestTimes(model, keys, pin, q.mode);
  if (!measured.ok()) return measured.status();
  // Predictions are read only when measurements leave gaps.
  std::map<store::GemmKey, store::PredictionRow> predicted;
  const std::string version = ModelVersionFor(gpu, q.dtype);
  if (measured->size() < keys.size()) {  // keys of one window are distinct
    auto p = db.FindPredictions(model, version, keys);
    if (!p.ok()) return p.status();
    predicted = *std::move(p);
  }
  // Device and software of a measurement, read once per pair.
  std::map<std::pair<int64_t, int64_t>, store::MeasurementRow> sources;
  absl::Status source_error;
  const auto source_of = [&](const store::BestTime& t) -> const store::MeasurementRow* {
    const auto pair = std::make_pair(t.device_id, t.software_id);
    if (auto it = sources.find(pair); it != sources.end()) return &it->second;
    auto row = db.GetMeasurement(t.measurement_id);
    if (!row.ok()) {
      source_error = row.status();
      return nullptr;
    }
    return &sources.emplace(pair, *std::move(row)).first->second;
  };

  const MlpTimer timer = [&](std::span<const GemmShape> gemms) -> absl::StatusOr<Timing> {
    Timing t;
    bool all_measured = true;
    bool all_predicted = true;
    double measured_us = 0;
    double low_us = 0;
    double high_us = 0;
    double predicted_us = 0;
    double predicted_low = 0;
    double predicted_high = 0;
    int devices = 1;
    for (const auto& g : gemms) {
      const auto key = store::GemmKey::Of(g);
      if (auto it = measured->find(key); it != measured->end()) {
        const store::BestTime& b = it->second;
        measured_us += b.median_us;
        // Rows from before intervals were kept count as exact.
        low_us += b.ci_high_us > 0 ? b.ci_low_us : b.median_us;
        high_us += b.ci_high_us > 0 ? b.ci_high_us : b.median_us;
        devices = std::max(devices, it->second.devices);
        if (t.device.uuid.empty()) {
          const store::MeasurementRow* source = source_of(it->second);
          if (source == nullptr) return source_error;
          t.device = source->device;
          t.software = source->software;
        }
      } else {
        all_measured = false;
      }
      if (auto it = predicted.find(key); it != predicted.end()) {
        const store::PredictionRow& r = it->second;
        predicted_us += r.time_us;
        // Within the model's expected error of each other: one tie.
        predicted_low += r.time_us * (1 - r.expected_error / 2);
        predicted_high += r.time_us * (1 + r.expected_error / 2);
      } else {
        all_predicted = false;
      }
    }
    if (all_measured) {
      t.time_us = measured_us;
      t.low_us = low_us;
      t.high_us = high_us;
      t.source = Source::kMeasured;
      t.provenance = StrCat(DescribeProvenance(t.device, t.software), "; ",
                            CacheModeName(q.mode.cache), " L2, ", ClockPolicyName(q.mode.clocks),
                            " clocks");
      if (devices > 1) {
        t.provenance += StrCat("; per GEMM the median of ", devices, " devices' best times");
      }
      return t;
    }
    if (all_predicted) {
      Timing p;
      p.time_us = predicted_us;
      p.low_us = predicted_low;
      p.high_us = predicted_high;
      p.source = Source::kPredicted;
      p.provenance = version;
      return p;
    }
    return absl::NotFoundError("not in the database");
  };
  return RankDff(q, *plan, timer);
}

absl::StatusOr<GemmAnswer> LookupGemm(const GemmShape& gemm, const GpuSpec& gpu, store::Store& db,
                                      const store::SoftwarePin& pin, const MeasureMode& mode) {
  if (auto s = ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
  const store::GemmKey key = store::GemmKey::Of(gemm);
  GemmAnswer answer;
  auto measured = db.BestMeasurements(std::string(gpu.name), {&key, 1}, pin, mode);
  if (!measured.ok()) return measured.status();
  if (auto it = measured->find(key); it != measured->end()) {
    answer.measured = it->second;
    return answer;
  }
  auto predicted =
      db.FindPredictions(std::string(gpu.name), ModelVersionFor(gpu, gemm.dtype), {&key, 1});
  if (!predicted.ok()) return predicted.status();
  if (auto it = predicted->find(key); it != predicted->end()) answer.predicted = it->second;
  return answer;
}

}  // namespace crest::answers
