#include "replay_backend.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <random>

#include "crest/common/env.h"
#include "crest/common/fnv1a.h"
#include "crest/common/str_cat.h"
#include "crest/measure/pipeline.h"
#include "crest/measure/retimer.h"
#include "crest/measure/set_racer.h"
#include "crest/measure/simulated_gpu.h"
#include "crest/store/timing_csv.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::sweep::internal {
namespace {

using measure::SimulatedGpu;
using store::GemmKey;

constexpr double kMaxReplayNoise = 0.5;
// The operands' generator seed: the pipeline verifies every output, and the
// simulated launcher answers with the generator's true products.
constexpr uint64_t kOperandSeed = 0x5eed;
// A GPU without a trace reads this power (any steady value: nothing drifts).
constexpr double kSteadyPowerW = 500;

// The simulated GPU and what scales the table's times onto it: with a
// trace, a table time is taken to be the time at the trace's settled
// (power-capped) clock, so that a replay under sustained load runs at the
// table's times and its first launches run faster, at boost.
struct Drift {
  SimulatedGpu gpu = SimulatedGpu::Steady(1, kSteadyPowerW);
  double boost_mhz = 1;   // the simulated GPU's idle (boost) clock
  double time_scale = 1;  // table time × this = the time at the boost clock
  std::string words = "none";
  std::string hash;
};

absl::StatusOr<Drift> DriftOf(const std::string& trace_path, const tuner::GpuSpec& gpu) {
  Drift drift;
  const double boost = gpu.boost_clock_mhz > 0 ? gpu.boost_clock_mhz : 1000;
  drift.gpu = SimulatedGpu::Steady(boost, kSteadyPowerW);
  drift.boost_mhz = boost;
  if (trace_path.empty()) return drift;
  auto text = DefaultEnv().ReadFile(trace_path);
  if (!text.ok()) return text.status();
  auto trace = measure::ParseTrace(*text, trace_path);
  if (!trace.ok()) return trace.status();
  auto load = measure::FindLoad(*trace);
  if (!load.ok())
    return absl::InvalidArgumentError(StrCat(trace_path, ": ", load.status().message()));
  std::vector<double> clocks;
  for (size_t i = load->load_row; i <= load->last_row; ++i)
    clocks.push_back((*trace)[i].sm_clock_mhz);
  std::nth_element(clocks.begin(), clocks.begin() + static_cast<long>(clocks.size() / 2),
                   clocks.end());
  const double settled = clocks[clocks.size() / 2];
  drift.boost_mhz = (*trace)[load->idle_row].sm_clock_mhz;
  drift.time_scale = settled / drift.boost_mhz;
  drift.words = std::filesystem::path(trace_path).filename().string();
  drift.hash = Fnv1a64Hex(*text);
  drift.gpu = SimulatedGpu(*std::move(trace), *load);
  return drift;
}

// The one algorithm of a replayed GEMM: the table's, whatever its tool ran
// (identity unknown: id 0, no tile; its bytes name it, as a stored
// algorithm must have some).
tuner::AlgoIdentity TableAlgo() {
  tuner::AlgoIdentity id;
  const std::string_view name = "replayed table";
  id.bytes.assign(name.begin(), name.end());
  return id;
}

// The table's time of each GEMM; the first row of a GEMM listed twice.
using Table = std::map<GemmKey, double>;

class ReplayBackend final : public tuner::Backend,
                            public measure::SetRacer,
                            public measure::Retimer {
 public:
  ReplayBackend(Table table, const tuner::GpuSpec& gpu, Drift drift, tuner::DeviceInfo device,
                const BackendChoice& choice)
      : table_(std::move(table)),
        gpu_(gpu),
        drift_(std::move(drift)),
        device_(std::move(device)),
        measure_(choice.measure),
        noise_(choice.replay.noise),
        rng_(choice.replay.seed),
        cublaslt_(choice.replay.cublaslt),
        tuning_(Tuning(drift_)),
        governor_(choice.measure.mode.clocks, tuning_) {}

  std::string_view Name() const override { return "replay"; }
  bool Measures() const override { return true; }
  const tuner::GpuSpec& Gpu() const override { return gpu_; }
  tuner::DeviceInfo Device() const override { return device_; }
  tuner::SoftwareInfo Software() const override { return {"replay", 0, cublaslt_}; }
  tuner::MeasureMode Mode() const override { return measure_.mode; }

  absl::StatusOr<tuner::GemmOutcome> Run(const tuner::GemmShape& gemm) override {
    auto launcher = Launcher(gemm);
    if (!launcher.ok()) return launcher.status();
    auto measured = measure::MeasureGemm(gemm, measure_, {{kOperandSeed, 0, 0}, 1}, *launcher,
                                         drift_.gpu, drift_.gpu, governor_, tuning_);
    if (!measured.ok()) return measured.status();
    measured->lda = gemm.ContiguousA();
    measured->ldb = gemm.ContiguousB();
    measured->ldc = gemm.ContiguousC();
    tuner::GemmOutcome outcome;
    outcome.measured = *std::move(measured);
    return outcome;
  }

  // The table holds one algorithm per GEMM, whatever its tool ran: the one
  // any stored run of it has, re-timed through the same pipeline.
  absl::StatusOr<tuner::GemmOutcome> Retime(const tuner::GemmShape& gemm,
                                            std::span<const tuner::AlgoIdentity> stored) override {
    (void)stored;
    return Run(gemm);
  }

  absl::StatusOr<measure::StudyRaceResult> RaceSets(
      std::span<const std::vector<measure::PinnedGemm>> sets,
      const measure::StudyRaceOptions& options, const std::function<bool()>& stop) override {
    // One launcher per GEMM, one launch per sample (as the CUDA backend's
    // pinned race): a candidate's time is its GEMMs' samples, back to back.
    std::vector<std::vector<measure::SimulatedLauncher>> launchers;
    for (const auto& set : sets) {
      std::vector<measure::SimulatedLauncher>& mine = launchers.emplace_back();
      for (const measure::PinnedGemm& p : set) {
        auto launcher = Launcher(p.gemm);
        if (!launcher.ok()) return launcher.status();
        mine.push_back(*std::move(launcher));
        if (auto s = mine.back().PrepareSamples(1); !s.ok()) return s;
      }
    }
    SetTimer timer(launchers, stop);
    auto result = measure::RaceCandidates(timer, drift_.gpu, drift_.gpu, options);
    governor_.MarkBusy(drift_.gpu.NowS());
    return result;
  }

 private:
  // A race candidate's time: one sample of each of its GEMMs, back to back.
  class SetTimer final : public measure::CandidateTimer {
   public:
    SetTimer(std::vector<std::vector<measure::SimulatedLauncher>>& sets,
             const std::function<bool()>& stop)
        : sets_(sets), stop_(stop) {}
    int Candidates() const override { return static_cast<int>(sets_.size()); }
    absl::StatusOr<double> Time(int c) override {
      if (stop_ && stop_()) return absl::CancelledError("the race was stopped");
      static constexpr std::array<int, 1> kOnly = {0};
      double us = 0;
      for (measure::SimulatedLauncher& launcher : sets_[static_cast<size_t>(c)]) {
        auto sample = launcher.Sample(kOnly);
        if (!sample.ok()) return sample.status();
        us += sample->front();
      }
      return us;
    }

   private:
    std::vector<std::vector<measure::SimulatedLauncher>>& sets_;
    const std::function<bool()>& stop_;
  };

  static measure::EngineTuning Tuning(const Drift& drift) {
    measure::EngineTuning t;
    t.boost_clock_mhz = drift.boost_mhz;
    return t;
  }

  // The GEMM's one algorithm on the simulated GPU, at the table's time.
  absl::StatusOr<measure::SimulatedLauncher> Launcher(const tuner::GemmShape& gemm) {
    const auto row = table_.find(GemmKey::Of(gemm));
    if (row == table_.end()) {
      return absl::NotFoundError(
          StrCat("replay: ", device_.replay, " has no row for ", gemm.name, " (", gemm.batch, "x",
                 gemm.m, "x", gemm.n, "x", gemm.k, " ", tuner::DTypeName(gemm.dtype), " ",
                 gemm.Layout(), "); the replay backend times only the GEMMs its table holds"));
    }
    measure::SimulatedLauncher launcher(drift_.gpu, gemm, {kOperandSeed, 0, 0},
                                        {row->second * drift_.time_scale}, noise_, rng_());
    launcher.Identify(0, TableAlgo());
    return launcher;
  }

  Table table_;
  const tuner::GpuSpec& gpu_;
  Drift drift_;
  tuner::DeviceInfo device_;
  measure::MeasureOptions measure_;
  double noise_ = 0;
  std::mt19937_64 rng_;   // seeds each launcher's noise, in the order they are made
  int64_t cublaslt_ = 0;  // the library version the table stands for
  measure::EngineTuning tuning_;
  measure::ClockGovernor governor_;
};

absl::Status ValidateReplay(const ReplayChoice& r) {
  if (r.file.empty()) {
    return absl::InvalidArgumentError(
        "replay: the replay backend needs a recorded table (--replay FILE.csv)");
  }
  if (!(r.noise >= 0 && r.noise <= kMaxReplayNoise)) {
    return absl::InvalidArgumentError(
        StrCat("replay.noise (--replay-noise): must be between 0 and ", kMaxReplayNoise, " (got ",
               r.noise, ")"));
  }
  if (r.cublaslt < 0) {
    return absl::InvalidArgumentError(
        StrCat("replay.cublaslt (--replay-cublaslt): must be 0 or "
               "a version number (got ",
               r.cublaslt, ")"));
  }
  return absl::OkStatus();
}

tuner::DeviceInfo ReplayDevice(const tuner::GpuSpec& gpu, const store::ImportBatch& batch,
                               const Drift& drift, const ReplayChoice& r) {
  tuner::DeviceInfo d;
  d.replay = StrCat(batch.source_file, " (", batch.source_hash, "), noise ", r.noise, ", seed ",
                    r.seed, ", drift ", drift.words,
                    drift.hash.empty() ? std::string() : StrCat(" (", drift.hash, ")"));
  d.name = StrCat("replay of ", batch.source_file);
  d.uuid = StrCat("REPLAY-", Fnv1a64Hex(d.replay));
  d.gpu_model = std::string(gpu.name);
  d.sm_count = gpu.sm_count;
  d.l2_bytes = gpu.l2_bytes;
  d.memory_bytes = static_cast<int64_t>(gpu.memory_gib * 1024 * 1024 * 1024);
  d.sm_clock_mhz = static_cast<int>(gpu.boost_clock_mhz);
  d.host = DefaultEnv().HostName();
  return d;
}

}  // namespace

absl::StatusOr<std::unique_ptr<tuner::Backend>> MakeReplayBackend(const BackendChoice& choice) {
  const ReplayChoice& r = choice.replay;
  if (auto s = ValidateReplay(r); !s.ok()) return s;
  if (auto s = measure::ValidateMeasureOptions(choice.measure); !s.ok()) return s;
  store::TimingCsvOptions csv;
  csv.device = choice.gpu;
  csv.device_flag = "--gpu";
  csv.tool = "replay";
  auto batch = store::ReadTimingCsv(r.file, csv);
  if (!batch.ok()) return batch.status();
  auto gpu = tuner::FindGpu(batch->gpu_model);
  if (!gpu.ok()) return gpu.status();
  if (!choice.gpu.empty()) {
    auto asked = tuner::FindGpu(choice.gpu);
    if (!asked.ok()) return asked.status();
    if ((*asked)->name != (*gpu)->name) {
      return absl::InvalidArgumentError(StrCat("gpu: --gpu ", choice.gpu, " is not the ",
                                               (*gpu)->name, " the table ", r.file,
                                               " was recorded on"));
    }
  }
  auto drift = DriftOf(r.trace, **gpu);
  if (!drift.ok()) return drift.status();
  Table table;
  for (const store::ImportedTiming& row : batch->rows) table.emplace(row.key, row.time_us);
  tuner::DeviceInfo device = ReplayDevice(**gpu, *batch, *drift, r);
  return std::unique_ptr<tuner::Backend>(std::make_unique<ReplayBackend>(
      std::move(table), **gpu, *std::move(drift), std::move(device), choice));
}

}  // namespace crest::sweep::internal
