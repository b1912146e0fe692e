#include "crest/measure/pipeline.h"

#include <algorithm>
#include <cmath>

#include "crest/common/str_cat.h"
#include "crest/measure/algo_race.h"
#include "crest/measure/sampling.h"

namespace crest::measure {
namespace {

// A monitor that adds up the time its readings take.
class TimedMonitor final : public GpuMonitor {
 public:
  TimedMonitor(GpuMonitor& monitor, EngineClock& clock) : monitor_(monitor), clock_(clock) {}
  GpuReading Read() override {
    const double start = clock_.NowS();
    GpuReading r = monitor_.Read();
    seconds_ += clock_.NowS() - start;
    return r;
  }
  double seconds() const { return seconds_; }

 private:
  GpuMonitor& monitor_;
  EngineClock& clock_;
  double seconds_ = 0;
};

// What one candidate's samples were taken in, beside the samples themselves.
struct CandidateLog {
  std::vector<double> clocks_mhz;
  std::vector<double> power_w;
  uint64_t reasons = 0;
  std::vector<double> discarded_us;  // kept only for the no-sample fallback
  std::string first_discard;
};

}  // namespace

int LaunchesPerSample(double one_launch_us, int copies, const EngineTuning& t) {
  const double per = std::max(one_launch_us, 0.1);
  const auto by_time = static_cast<int64_t>(std::ceil(t.target_sample_us / per));
  const int64_t wanted = std::max<int64_t>(by_time, copies);
  return static_cast<int>(std::clamp<int64_t>(wanted, 1, t.max_launches_per_sample));
}

namespace {

// The race and what each candidate's samples were taken in.
struct RaceRun {
  AlgoRace race;
  std::vector<CandidateLog> logs;
  double kernel_us = 0;
};

// The filter for a round. Burst: the governor's boost clock. Sustained: the
// median clock of this GEMM's rounds so far, so a heavy GEMM after light ones
// (power-capped after boost) is judged by its own settled state, and only a
// collapse far under it is discarded.
SampleFilter RoundFilter(const ClockGovernor& governor, const std::vector<double>& gemm_clocks) {
  if (governor.Filter().policy() == tuner::ClockPolicy::kBurst) return governor.Filter();
  return SampleFilter(tuner::ClockPolicy::kSustained, Median(gemm_clocks));
}

// Sustained: whether the last round's first sample started after the device
// idled longer than a reload is made for (the launcher's measurement); the
// governor then owes that gap a reload. At most max_idle_retakes per GEMM.
bool StartedAfterIdle(const GemmLauncher& launcher, ClockGovernor& governor,
                      const EngineTuning& tuning, int* retakes) {
  if (governor.policy() != tuner::ClockPolicy::kSustained || *retakes >= tuning.max_idle_retakes) {
    return false;
  }
  const std::optional<double> idle_us = launcher.IdleBeforeLastSample();
  if (!idle_us || *idle_us <= tuning.reload_after_idle_s * 1e6) return false;
  governor.MarkIdle(*idle_us / 1e6);
  ++*retakes;
  return true;
}

absl::Status RunRace(RaceRun& run, int launches, GemmLauncher& launcher, GpuMonitor& monitor,
                     EngineClock& clock, ClockGovernor& governor, const EngineTuning& tuning,
                     const std::function<absl::StatusOr<double>()>& load) {
  std::vector<double> gemm_clocks;
  double sampling_s = 0;
  int cooldowns = 0;
  int idle_retakes = 0;
  while (!run.race.Finished(sampling_s)) {
    // A pause since the last round (sustained: made up by load first).
    if (governor.policy() == tuner::ClockPolicy::kSustained) {
      if (auto s = governor.Prepare(load, monitor, clock, &run.kernel_us); !s.ok()) return s;
    }
    const std::vector<int> order = run.race.NextRound();
    const double start = clock.NowS();
    auto times = launcher.Sample(order);
    if (!times.ok()) return times.status();
    const GpuReading reading = ReadAt(monitor, clock);
    sampling_s += reading.time_s - start;
    governor.MarkBusy(reading.time_s);
    if (reading.sm_clock_mhz > 0) gemm_clocks.push_back(reading.sm_clock_mhz);
    const SampleFilter filter = RoundFilter(governor, gemm_clocks);
    std::optional<Discard> verdict = filter.Judge(reading);
    if (!verdict && StartedAfterIdle(launcher, governor, tuning, &idle_retakes)) {
      verdict = Discard::kAfterIdle;
    }
    for (size_t i = 0; i < order.size(); ++i) {
      const int c = order[i];
      const double us = (*times)[i];
      CandidateLog& log = run.logs[static_cast<size_t>(c)];
      run.kernel_us += us;
      log.reasons |= reading.reasons;
      if (verdict) {
        run.race.CountDiscarded(c);
        log.discarded_us.push_back(us / launches);
        if (log.first_discard.empty()) log.first_discard = std::string(DiscardName(*verdict));
        continue;
      }
      run.race.Add(c, us / launches);
      log.clocks_mhz.push_back(reading.sm_clock_mhz);
      log.power_w.push_back(reading.power_w);
    }
    run.race.EndRound();
    if (verdict && filter.policy() == tuner::ClockPolicy::kBurst &&
        cooldowns < tuning.max_cooldowns) {
      ++cooldowns;
      clock.SleepS(tuning.burst_cooldown_s);
    }
  }
  return absl::OkStatus();
}

double MedianKnown(const std::vector<double>& values) {
  std::vector<double> known;
  for (double v : values) {
    if (v > 0) known.push_back(v);
  }
  return Median(known);
}

tuner::AlgoResult SummarizeCandidate(const tuner::GemmShape& gemm, const RaceRun& run, int c,
                                     const tuner::AlgoIdentity& id) {
  tuner::AlgoResult r;
  r.algo = id;
  const CandidateLog& log = run.logs[static_cast<size_t>(c)];
  std::vector<double> kept = RejectOutliers(run.race.Samples(c));
  if (kept.empty() && !log.discarded_us.empty()) {
    // Never leave an algorithm without a time because of clocks.
    kept = RejectOutliers(log.discarded_us);
    r.clock_note = StrCat("every sample was taken during ", log.first_discard,
                          "; they are kept so the algorithm has a time");
  }
  r.stats = Summarize(kept);
  r.stats.sm_clock_mhz = MedianKnown(log.clocks_mhz);
  r.stats.power_w = MedianKnown(log.power_w);
  r.stats.throttle_reasons = log.reasons;
  r.stats.discarded = run.race.Discarded(c);
  r.tflops = r.stats.median_us > 0 ? gemm.Flops() / r.stats.median_us / 1e6 : 0;
  return r;
}

// Verifies every algorithm; returns the device time of their runs [µs].
absl::StatusOr<double> VerifyAll(const tuner::GemmShape& gemm, const GemmOperands& operands,
                                 GemmLauncher& launcher, std::vector<tuner::AlgoResult>& algos) {
  const std::vector<OutputIndex> elements = PickOutputElements(gemm);
  const std::vector<SampledElement> references = ReferenceElements(gemm, operands.source, elements);
  double device_us = 0;
  for (size_t c = 0; c < algos.size(); ++c) {
    auto out = launcher.RunAndRead(static_cast<int>(c), elements);
    if (!out.ok()) return out.status();
    device_us += out->device_us;
    std::vector<SampledElement> checked = references;
    for (size_t i = 0; i < checked.size(); ++i) checked[i].out = out->values[i];
    const VerifyResult v = VerifySamples(checked, gemm.dtype);
    algos[c].verified = v.ok;
    algos[c].verify_note = v.note;
  }
  return device_us;
}

}  // namespace

absl::StatusOr<tuner::MeasuredGemm> MeasureGemm(const tuner::GemmShape& gemm,
                                                const MeasureOptions& options,
                                                const GemmOperands& operands,
                                                GemmLauncher& launcher, GpuMonitor& gpu_monitor,
                                                EngineClock& clock, ClockGovernor& governor,
                                                const EngineTuning& tuning) {
  TimedMonitor monitor(gpu_monitor, clock);
  const int n = launcher.Candidates();
  if (n == 0) return absl::InvalidArgumentError("no candidate algorithm to measure");
  const double reloaded_before = governor.reload_s();
  RaceRun run{AlgoRace(n, {options.min_samples, 10000, options.max_noise, options.max_seconds}),
              std::vector<CandidateLog>(static_cast<size_t>(n)), 0};
  const auto queue_load = [&](int count) { return launcher.QueueLoad(0, count); };
  governor.HostWorkDone(HostWork::kBetweenGemms, clock);
  const double gap_before = governor.IdleS(clock.NowS());
  auto one = launcher.TimeOneLaunch(0);
  if (!one.ok()) return one.status();
  // The timed launch, and the untimed one per copy before it (taken at its time).
  run.kernel_us += *one * (1 + operands.copies);
  // A launch or two are no load: the gap before them still counts.
  governor.MarkBusy(clock.NowS(), gap_before);
  const int launches = LaunchesPerSample(*one, operands.copies, tuning);
  auto graphs_load = governor.KeepLoad(HostWork::kGraphs, *one, queue_load, clock);
  if (!graphs_load.ok()) return graphs_load.status();
  const double preparing = clock.NowS();
  if (auto s = launcher.PrepareSamples(launches); !s.ok()) return s;
  const double graphs_s = clock.NowS() - preparing;
  governor.HostWorkDone(HostWork::kGraphs, clock);
  const int rounds =
      std::max(1, static_cast<int>(std::ceil(tuning.warmup_round_us / (*one * launches))));
  const std::vector<int> warm_order(static_cast<size_t>(std::min(rounds, 1000)), 0);
  const auto warm_round = [&]() -> absl::StatusOr<double> {
    auto times = launcher.Sample(warm_order);
    if (!times.ok()) return times.status();
    double sum = 0;
    for (double t : *times) sum += t;
    return sum;
  };
  if (auto s = governor.Prepare(warm_round, monitor, clock, &run.kernel_us); !s.ok()) return s;
  if (auto s = RunRace(run, launches, launcher, monitor, clock, governor, tuning, warm_round);
      !s.ok()) {
    return s;
  }
  tuner::MeasuredGemm m;
  m.gemm = gemm;
  m.mode = options.mode;
  m.settled_clock_mhz = governor.reference_mhz();
  for (int c = 0; c < n; ++c) {
    m.algos.push_back(SummarizeCandidate(gemm, run, c, launcher.Identity(c)));
    if (!governor.note().empty() && m.algos.back().clock_note.empty()) {
      m.algos.back().clock_note = governor.note();
    }
  }
  const double verifying = clock.NowS();
  auto verify_us = VerifyAll(gemm, operands, launcher, m.algos);
  if (!verify_us.ok()) return verify_us.status();
  // Each algorithm's verification run is device work like the samples;
  // the stage is the host's part (references, read-back, waits).
  run.kernel_us += *verify_us;
  m.host.graphs_s = graphs_s;
  m.host.readings_s = monitor.seconds();
  m.host.verify_s = std::max(0.0, clock.NowS() - verifying - *verify_us / 1e6);
  // The host's work until the next GEMM runs beside this GEMM's load.
  auto next_load =
      governor.KeepLoad(HostWork::kBetweenGemms, m.algos[0].stats.median_us, queue_load, clock);
  if (!next_load.ok()) return next_load.status();
  m.keep_load_seconds = (*graphs_load + *next_load) / 1e6;
  m.kernel_seconds = (run.kernel_us + *graphs_load + *next_load) / 1e6;
  m.reload_seconds = governor.reload_s() - reloaded_before;
  return m;
}

}  // namespace crest::measure
