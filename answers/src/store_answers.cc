#include "crest/answers/store_answers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <set>
#include <vector>

#include "crest/common/str_cat.h"
#include "crest/tuner/predictor.h"

namespace crest::answers {

std::string DescribeProvenance(const DeviceInfo& d, const SoftwareInfo& s) {
  return StrCat(d.name, " ", d.uuid, " on ", d.host, "; driver ", s.driver, ", CUDA runtime ",
                s.cuda_runtime, ", cuBLASLt ", s.cublaslt);
}

store::PredictionRow PredictionRowOf(const GemmShape& gemm, const GpuSpec& gpu,
                                     const Prediction& p) {
  store::PredictionRow row;
  row.gpu_model = std::string(gpu.name);
  row.model_version = std::string(p.model_version);
  row.key = store::GemmKey::Of(gemm);
  row.time_us = p.time_us;
  row.tflops = p.tflops;
  row.tile_m = p.best.tile.m;
  row.tile_n = p.best.tile.n;
  row.tiles = p.best.tiles;
  row.waves = p.best.waves;
  row.tile_efficiency = p.best.tile_efficiency;
  row.wave_efficiency = p.best.wave_efficiency;
  row.alignment_factor = p.alignment_factor;
  row.expected_error = p.expected_error;
  row.bound = p.memory_bound ? "memory" : "compute";
  return row;
}

namespace {

// Times an MLP's GEMMs from what the store holds: all measured (with the
// measurements' device, software and mode), else predicted (the store's
// prediction, or the same model run now where the store has none), else
// NotFound (the model has no path for the dtype on this GPU). Reads each
// (device, software) pair's description once.
class StoreTimer {
 public:
  StoreTimer(store::Store& db, const DffQuery& query, const GpuSpec& gpu, std::string version,
             std::map<store::GemmKey, store::BestTime> measured,
             std::map<store::GemmKey, store::PredictionRow> predicted)
      : db_(db), query_(query), gpu_(gpu), version_(std::move(version)),
        measured_(std::move(measured)), predicted_(std::move(predicted)) {}

  absl::StatusOr<Timing> operator()(std::span<const GemmShape> gemms) {
    auto measured = Measured(gemms);
    if (!measured.ok()) return measured.status();
    if (measured->has_value()) return **measured;
    return Predicted(gemms);
  }

  absl::StatusOr<Timing> Predicted(std::span<const GemmShape> gemms) const {
    Timing p;
    for (const auto& g : gemms) {
      double time_us = 0;
      double expected_error = 0;
      if (auto it = predicted_.find(store::GemmKey::Of(g)); it != predicted_.end()) {
        time_us = it->second.time_us;
        expected_error = it->second.expected_error;
      } else {
        auto live = Predict(g, gpu_);
        if (!live.ok()) return absl::NotFoundError(live.status().message());
        time_us = live->time_us;
        expected_error = live->expected_error;
      }
      p.time_us += time_us;
      // Within the model's expected error of each other: one tie.
      p.low_us += time_us * (1 - expected_error / 2);
      p.high_us += time_us * (1 + expected_error / 2);
    }
    p.source = Source::kPredicted;
    p.provenance = version_;
    return p;
  }

 private:
  absl::StatusOr<std::optional<Timing>> Measured(std::span<const GemmShape> gemms) {
    Timing t;
    int devices = 1;
    for (const auto& g : gemms) {
      auto it = measured_.find(store::GemmKey::Of(g));
      if (it == measured_.end()) return std::nullopt;
      const store::BestTime& b = it->second;
      t.time_us += b.median_us;
      // Rows from before intervals were kept count as exact.
      t.low_us += b.ci_high_us > 0 ? b.ci_low_us : b.median_us;
      t.high_us += b.ci_high_us > 0 ? b.ci_high_us : b.median_us;
      devices = std::max(devices, b.devices);
      if (t.device.uuid.empty()) {
        auto source = SourceOf(b);
        if (!source.ok()) return source.status();
        t.device = (*source)->device;
        t.software = (*source)->software;
      }
    }
    t.source = Source::kMeasured;
    t.provenance = StrCat(DescribeProvenance(t.device, t.software), "; ",
                          CacheModeName(query_.mode.cache), " L2, ",
                          ClockPolicyName(query_.mode.clocks), " clocks");
    if (devices > 1) {
      t.provenance += StrCat("; per GEMM the median of ", devices, " devices' best times");
    }
    return t;
  }

  absl::StatusOr<const store::MeasurementRow*> SourceOf(const store::BestTime& t) {
    const auto pair = std::make_pair(t.device_id, t.software_id);
    if (auto it = sources_.find(pair); it != sources_.end()) return &it->second;
    auto row = db_.GetMeasurement(t.measurement_id);
    if (!row.ok()) return row.status();
    return &sources_.emplace(pair, *std::move(row)).first->second;
  }

  store::Store& db_;
  const DffQuery& query_;
  const GpuSpec& gpu_;
  std::string version_;
  std::map<store::GemmKey, store::BestTime> measured_;
  std::map<store::GemmKey, store::PredictionRow> predicted_;
  std::map<std::pair<int64_t, int64_t>, store::MeasurementRow> sources_;
};

}  // namespace

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
  StoreTimer timer(db, q, gpu, version, *std::move(measured), std::move(predicted));
  auto ranking = RankDff(q, *plan, std::ref(timer));
  if (!ranking.ok()) return ranking;
  // Predicted rows get their speed-up against the baseline's prediction
  // when the baseline itself is measured: each kind against its own kind.
  if (ranking->baseline_found && ranking->baseline.source != Source::kPredicted &&
      ranking->predicted > 0) {
    const auto& values = plan->candidates.values;
    const auto at = std::find(values.begin(), values.end(), ranking->baseline.d_ff);
    auto predicted_baseline = timer.Predicted(plan->gemms[static_cast<size_t>(at - values.begin())]);
    if (predicted_baseline.ok()) {
      SetSpeedups(ranking->rows, Source::kPredicted, predicted_baseline->time_us);
    }
  }
  return ranking;
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
  if (auto it = predicted->find(key); it != predicted->end()) {
    answer.predicted = it->second;
    return answer;
  }
  // Not in the store: the same model, run now.
  auto live = Predict(gemm, gpu);
  if (!live.ok()) return answer;  // no path for this dtype on this GPU: nothing to answer
  answer.predicted = PredictionRowOf(gemm, gpu, *live);
  return answer;
}

}  // namespace crest::answers
