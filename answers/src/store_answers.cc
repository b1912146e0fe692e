// StoreAnswers: a result database answers, the model filling what it lacks.
#include <memory>

#include "crest/answers/answers.h"
#include "crest/answers/set_timers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/timing_ops.h"
#include "stored_times.h"

namespace crest::answers {
namespace {

// A stored race as a d_ff ranking uses it; `run` is the run it raced.
tuner::DffRace DffRaceOf(const store::RaceRecord& r, const tuner::RunInfo& run) {
  tuner::DffRace race;
  race.info.race_id = r.id;
  race.info.run = run;
  race.info.candidates = static_cast<int>(r.entries.size());
  race.info.rounds = r.rounds;
  race.info.retaken = r.retaken;
  race.info.resolution = r.resolution;
  race.info.error_rate = r.error_rate;
  race.info.seconds = r.seconds;
  race.info.settled = r.settled;
  race.info.stop_reason = r.stop_reason;
  race.info.created_us = r.created_us;
  race.standings = r.entries;
  return race;
}

class StoreAnswersImpl final : public Answers {
 public:
  StoreAnswersImpl(store::Store& db, std::unique_ptr<store::Store> owned, std::string description,
                   AnswerOptions options)
      : db_(db), owned_(std::move(owned)), origin_{std::move(description), options, true} {}

  const AnswerOrigin& origin() const override { return origin_; }

  absl::StatusOr<tuner::DffRanking> Dff(const tuner::DffQuery& query,
                                        const tuner::GpuSpec& gpu) override {
    internal::StoredTimes stored(db_, gpu, origin_.options);
    SetTimers timers = TimersOf(stored);
    if (origin_.options.races) timers.races = RaceFinder(query);
    return RankDffWith(query, gpu, timers);
  }

  absl::StatusOr<tuner::VocabRanking> Vocab(const tuner::VocabQuery& query,
                                            const tuner::GpuSpec& gpu) override {
    internal::StoredTimes stored(db_, gpu, origin_.options);
    return RankVocabWith(query, TimersOf(stored));
  }

  absl::StatusOr<std::vector<tuner::DesignRow>> Design(std::span<const tuner::DesignConfig> configs,
                                                       const tuner::DesignOptions& options,
                                                       const tuner::GpuSpec& gpu) override {
    internal::StoredTimes stored(db_, gpu, origin_.options);
    return RankDesignsWith(configs, options, gpu, TimersOf(stored));
  }

  absl::StatusOr<GemmAnswer> Lookup(const tuner::GemmShape& gemm,
                                    const tuner::GpuSpec& gpu) override;

  absl::StatusOr<tuner::Prediction> Predict(const tuner::GemmShape& gemm,
                                            const tuner::GpuSpec& gpu) override {
    return crest::tuner::Predict(gemm, gpu);
  }

 private:
  static SetTimers TimersOf(internal::StoredTimes& stored) {
    SetTimers t;
    t.time = [&stored](std::span<const tuner::GemmShape> set) { return stored.Time(set); };
    t.predict = [&stored](std::span<const tuner::GemmShape> set) { return stored.Predicted(set); };
    t.sum = [&stored](std::span<const tuner::GemmShape> set) { return stored.Sum(set); };
    t.prefetch = [&stored](const tuner::GemmSets& sets) { return stored.Prefetch(sets); };
    t.across_runs = [&stored] { return stored.across_runs(); };
    return t;
  }

  // The race of `query`'s study that a run made, from the database.
  tuner::DffRaceFinder RaceFinder(const tuner::DffQuery& query) {
    return [this, study = tuner::DffStudyKey(query)](
               const tuner::RunInfo& run) -> absl::StatusOr<std::optional<tuner::DffRace>> {
      auto found = db_.FindRace(run.job_id, run.device_uuid, study, origin_.options.mode,
                                origin_.options.algo, /*with_times=*/false);
      if (!found.ok()) return found.status();
      if (!found->has_value()) return std::optional<tuner::DffRace>();
      return std::optional<tuner::DffRace>(DffRaceOf(**found, run));
    };
  }

  store::Store& db_;
  std::unique_ptr<store::Store> owned_;
  AnswerOrigin origin_;
};

absl::StatusOr<GemmAnswer> StoreAnswersImpl::Lookup(const tuner::GemmShape& gemm,
                                                    const tuner::GpuSpec& gpu) {
  if (auto s = tuner::ValidateGemmSizes(gemm.m, gemm.n, gemm.k, gemm.batch); !s.ok()) return s;
  internal::StoredTimes stored(db_, gpu, origin_.options);
  GemmAnswer answer;
  auto choice = stored.Choose({&gemm, 1});
  if (!choice.ok()) return choice.status();
  if (choice->has_value()) {
    const internal::StoredTimes::Choice& c = **choice;
    auto row = db_.GetMeasurement(c.bests.front().measurement_id);
    if (!row.ok()) return row.status();
    answer.measured = *std::move(row);
    for (const store::RunKey& key : c.runs) {
      auto run = stored.Run(key);
      if (!run.ok()) return run.status();
      answer.runs.push_back((*run)->info);
    }
    answer.pooled = c.pooled;
    if (c.pooled) {
      answer.pooled_us = c.pooled_us.front();
      std::tie(answer.pooled_low_us, answer.pooled_high_us) = c.pool.front();
    }
    return answer;
  }
  const store::GemmKey key = store::GemmKey::Of(gemm);
  auto predicted = db_.FindPredictions(std::string(gpu.name),
                                       tuner::ModelVersionFor(gpu, gemm.dtype), {&key, 1});
  if (!predicted.ok()) return predicted.status();
  if (!predicted->empty()) {
    answer.predicted = predicted->begin()->second;
    return answer;
  }
  // Not in the store: the same model, run now.
  auto live = crest::tuner::Predict(gemm, gpu);
  if (!live.ok()) return answer;  // no path for this dtype on this GPU: nothing to answer
  answer.predicted = PredictionRowOf(gemm, gpu, *live);
  return answer;
}

}  // namespace

std::string_view RunChoiceName(RunChoice choice) {
  return choice == RunChoice::kAll ? "all" : "latest";
}

std::optional<RunChoice> ParseRunChoice(std::string_view text) {
  if (text == "latest") return RunChoice::kLatest;
  if (text == "all") return RunChoice::kAll;
  return std::nullopt;
}

std::unique_ptr<Answers> StoreAnswers(store::Store& db, std::string description,
                                      AnswerOptions options) {
  return std::make_unique<StoreAnswersImpl>(db, nullptr, std::move(description), options);
}

std::unique_ptr<Answers> StoreAnswers(std::unique_ptr<store::Store> db, std::string description,
                                      AnswerOptions options) {
  store::Store& ref = *db;
  return std::make_unique<StoreAnswersImpl>(ref, std::move(db), std::move(description), options);
}

std::string DescribeMeasurement(const tuner::DeviceInfo& device,
                                const tuner::SoftwareInfo& software,
                                const tuner::MeasureMode& mode) {
  return StrCat(DescribeProvenance(device, software), "; ", tuner::CacheModeName(mode.cache),
                " L2, ", tuner::ClockPolicyName(mode.clocks), " clocks");
}

absl::StatusOr<std::vector<tuner::Timing>> TimeGemmSet(store::Store& db, const tuner::GpuSpec& gpu,
                                                       const AnswerOptions& options,
                                                       std::span<const tuner::GemmShape> gemms,
                                                       bool predict_only) {
  internal::StoredTimes stored(db, gpu, options);
  return predict_only ? stored.Predicted(gemms) : stored.Time(gemms);
}

std::string DescribeProvenance(const tuner::DeviceInfo& d, const tuner::SoftwareInfo& s) {
  if (!d.replay.empty()) {
    return StrCat("REPLAYED (not measured): ", d.replay, ", on a simulated ", d.gpu_model, " on ",
                  d.host);
  }
  return StrCat(d.name, " ", d.uuid, " on ", d.host, "; driver ", s.driver, ", CUDA runtime ",
                s.cuda_runtime, ", cuBLASLt ", s.cublaslt);
}

store::PredictionRow PredictionRowOf(const tuner::GemmShape& gemm, const tuner::GpuSpec& gpu,
                                     const tuner::Prediction& p) {
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

absl::StatusOr<tuner::Timing> TimingOf(const GemmAnswer& a, const tuner::GemmShape& g) {
  if (a.measured) {
    const auto& m = *a.measured;
    const auto& stats = m.result.stats;
    tuner::Timing t = a.pooled ? tuner::MeasuredTiming(a.pooled_us, a.pooled_low_us,
                                                       a.pooled_high_us, m.device, m.software)
                               : tuner::MeasuredTiming(stats.median_us, stats.ci_low_us,
                                                       stats.ci_high_us, m.device, m.software);
    t.provenance = DescribeMeasurement(m.device, m.software, m.mode);
    t.runs = a.runs;
    t.pooled = a.pooled;
    return t;
  }
  if (a.predicted) {
    return tuner::PredictedTiming(a.predicted->time_us, a.predicted->expected_error,
                                  a.predicted->model_version);
  }
  return absl::NotFoundError(StrCat("nothing answers ", g.name, " (", tuner::DTypeName(g.dtype),
                                    " M=", g.m, " N=", g.n, " K=", g.k, ")"));
}

}  // namespace crest::answers
