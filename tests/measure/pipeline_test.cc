// The measurement pipeline against a GPU scripted from the recorded H100
// trace: it must settle on the power-capped clock and keep those samples,
// race the algorithms, always give each one a time, and verify each one.
#include "crest/measure/pipeline.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "scripted_gpu.h"

namespace crest::measure {
namespace {

using testing::H100;
using testing::ScriptedGpu;
using testing::ScriptedLauncher;

tuner::GemmShape MlpGateUp() {
  tuner::GemmShape g;
  g.name = "mlp_gate_up.fwd";
  g.m = 64;  // small enough for the host reference to be quick; times are scripted
  g.n = 96;
  g.k = 4096;
  return g;
}

struct Harness {
  ScriptedGpu gpu = H100();
  MeasureOptions options;
  EngineTuning tuning;
  GemmOperands operands{{42, 0, 64 * 4096}, 1};

  absl::StatusOr<tuner::MeasuredGemm> Measure(ScriptedLauncher& launcher, ClockGovernor& governor) {
    return MeasureGemm(MlpGateUp(), options, operands, launcher, gpu, gpu, governor, tuning);
  }
  ScriptedLauncher Launcher(std::vector<double> burst_us, double noise = 0.005) {
    return ScriptedLauncher(gpu, MlpGateUp(), operands.source, std::move(burst_us), noise);
  }
};

TEST(Pipeline, SustainedPolicySettlesOnThePowerCappedClockAndKeepsItsSamples) {
  Harness h;
  ScriptedLauncher launcher = h.Launcher({2000, 2100, 2600});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  // Settled where the H100 runs under sustained load, not at its boost clock.
  EXPECT_GE(m->settled_clock_mhz, 1410);
  EXPECT_LE(m->settled_clock_mhz, 1515);
  EXPECT_EQ(m->mode.clocks, tuner::ClockPolicy::kSustained);
  ASSERT_EQ(m->algos.size(), 3u);
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.samples, 0) << "an algorithm was left without a time";
    EXPECT_EQ(a.stats.discarded, 0) << "a power-capped sample was discarded";
    EXPECT_TRUE(a.verified) << a.verify_note;
    EXPECT_TRUE(a.clock_note.empty()) << a.clock_note;
    EXPECT_NE(a.stats.throttle_reasons & kReasonSwPowerCap, 0u);
    EXPECT_GT(a.stats.power_w, 600);
    EXPECT_GE(a.stats.sm_clock_mhz, 1380);
    EXPECT_LE(a.stats.sm_clock_mhz, 1515);
  }
  // The sustained time: 2000 µs at boost runs at 1980/~1460 of that.
  const double expected = 2000 * 1980.0 / m->settled_clock_mhz;
  EXPECT_NEAR(m->algos[0].stats.median_us, expected, 0.04 * expected);
  EXPECT_LE(m->algos[0].stats.ci_low_us, m->algos[0].stats.median_us);
  EXPECT_GE(m->algos[0].stats.ci_high_us, m->algos[0].stats.median_us);
  EXPECT_GT(m->kernel_seconds, 1.0) << "warm-up and samples are device time";
  // Verification runs each algorithm once more (2000 + 2100 + 2600 µs at
  // boost, at the capped clock here): device time, counted with the
  // kernels, not as the host's (the scripted host's part takes no time).
  const double verify_s = (2000 + 2100 + 2600) * 1980.0 / m->settled_clock_mhz / 1e6;
  EXPECT_LT(m->host.verify_s, 1e-9);
  // All the scripted GPU's time is device time: the wall time is the kernel
  // time but for the load queued at its end, which runs after it. Without the
  // verification runs 8.9 ms would be missing, without the sizing launch's
  // untimed one (its kernel load) 2 ms.
  EXPECT_NEAR(m->keep_load_seconds, 0.05, 0.003) << "the first keep-load: 50 ms";
  EXPECT_NEAR(h.gpu.NowS() - 1000, m->kernel_seconds - m->keep_load_seconds, 5e-4);
  EXPECT_GT(verify_s, 4 * 0.002);
  EXPECT_EQ(m->host.graphs_s, 0) << "the scripted launcher prepares its samples at once";
}

TEST(Pipeline, TheTimeSpentReadingTheGpuIsAStageOfItsOwn) {
  Harness h;
  h.gpu.read_s = 0.002;
  ScriptedLauncher launcher = h.Launcher({2000, 2100});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_GT(h.gpu.reads(), 10);
  EXPECT_NEAR(m->host.readings_s, 0.002 * static_cast<double>(h.gpu.reads()), 1e-9)
      << "every reading's time, and nothing else";
}

TEST(Pipeline, WarmUpLastsUntilPowerSettlesNotAFixedFraction) {
  Harness h;
  ScriptedLauncher launcher = h.Launcher({2000});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  ASSERT_TRUE(h.Measure(launcher, governor).ok());
  // The trace's power ramps for about a second after load starts; the
  // warm-up must cover that and stop long before its 10 s limit.
  EXPECT_GE(h.gpu.load_s(), 1.0);
  EXPECT_LT(h.gpu.load_s(), 5.0);
  EXPECT_TRUE(governor.note().empty()) << governor.note();
}

TEST(Pipeline, WarmsUpOnceAcrossGemmsButAgainAfterIdle) {
  Harness h;
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  ScriptedLauncher first = h.Launcher({2000});
  ASSERT_TRUE(h.Measure(first, governor).ok());
  const double after_first = h.gpu.NowS();
  ScriptedLauncher second = h.Launcher({2000});
  ASSERT_TRUE(h.Measure(second, governor).ok());
  EXPECT_LT(h.gpu.NowS() - after_first, 0.8) << "a busy GPU was warmed up again";
  h.gpu.SleepS(5);  // the GPU idles and boosts again
  const double before_third = h.gpu.NowS();
  ScriptedLauncher third = h.Launcher({2000});
  auto m = h.Measure(third, governor);
  ASSERT_TRUE(m.ok());
  EXPECT_GT(h.gpu.NowS() - before_third, 1.0) << "no warm-up after the GPU idled";
  EXPECT_LE(m->settled_clock_mhz, 1515);
}

// The power-cap controller's time constants the steady-load tests assume:
// a 150 ms pause (the host's work between two GEMMs) lets the clock climb
// most of the way back to boost.
constexpr ScriptedGpu::Controller kController{0.1, 0.1};

// The loaded state the comparison is made in: 14-18 s into back-to-back
// load (the trace's clock has stopped drifting; its last rows are the
// unload).
constexpr double kSteadyFromS = 14;
constexpr double kSteadyToS = 18;

// The median time of one 2000 µs (at boost) GEMM run back to back: the
// state a training step's GEMMs run in.
double BackToBackSteadyUs() {
  ScriptedGpu gpu = H100();
  gpu.SetController(kController);
  std::vector<double> times;
  while (gpu.load_s() < kSteadyToS) {
    const double us = gpu.Run(2000);
    if (gpu.load_s() > kSteadyFromS) times.push_back(us);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// What eight GEMMs measured after host pauses came to.
struct AfterPauses {
  double median_us = 0;  // the median of their medians
  int reloads = 0;
  double keep_load_s = 0;  // queued while the host worked
  double wall_s = 0;       // from the first GEMM to the end of the last
};

// A sweep in progress (the GPU already loaded for kSteadyFromS), then eight
// GEMMs measured one after another, the host working 150 ms before each.
AfterPauses MeasureAfterHostPauses(EngineTuning tuning) {
  Harness h;
  h.tuning = tuning;
  h.gpu.SetController(kController);
  while (h.gpu.load_s() < kSteadyFromS) h.gpu.Run(2000);
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  std::vector<double> medians;
  AfterPauses out;
  const double start = h.gpu.NowS();
  for (int i = 0; i < 8; ++i) {
    h.gpu.SleepS(0.15);
    ScriptedLauncher launcher = h.Launcher({2000});
    auto m = h.Measure(launcher, governor);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) continue;
    medians.push_back(m->algos[0].stats.median_us);
    out.keep_load_s += m->keep_load_seconds;
  }
  out.wall_s = h.gpu.NowS() - start;
  out.reloads = governor.reloads();
  std::sort(medians.begin(), medians.end());
  out.median_us = medians[medians.size() / 2];
  return out;
}

TEST(Pipeline, SamplesAfterTheHostsPauseMatchABackToBackLoopsSteadyState) {
  const double steady = BackToBackSteadyUs();
  EngineTuning old;  // before the reload: a pause under a second went unnoticed
  old.reload_after_idle_s = 1e9;
  old.keep_load = false;
  const AfterPauses without = MeasureAfterHostPauses(old);
  EXPECT_EQ(without.reloads, 0);
  EXPECT_LT(without.median_us, 0.95 * steady)
      << "the pauses make samples optimistic (the logic's premise)";
  EngineTuning reload_only;
  reload_only.keep_load = false;
  const AfterPauses with = MeasureAfterHostPauses(reload_only);
  EXPECT_GE(with.reloads, 7) << "each pause after the first GEMM's warm-up is made up";
  EXPECT_NEAR(with.median_us, steady, 0.03 * steady)
      << "within 3% of the back-to-back steady state";
}

TEST(Pipeline, LoadQueuedBeforeTheHostsWorkKeepsTheGpuLoadedAtLessWallTimeThanReloads) {
  const double steady = BackToBackSteadyUs();
  EngineTuning reload_only;
  reload_only.keep_load = false;
  const AfterPauses reloaded = MeasureAfterHostPauses(reload_only);
  const AfterPauses kept = MeasureAfterHostPauses(EngineTuning{});
  EXPECT_NEAR(kept.median_us, steady, 0.03 * steady)
      << "within 3% of the back-to-back steady state";
  // Only the first pause, before any was timed, outlasts its load (50 ms
  // queued for 150 ms); each later one is covered by 1.25 times the last
  // (whole launches of 2.7 ms). The first GEMM queues nothing before its
  // warm-up; the last queues for a pause that does not come.
  EXPECT_EQ(kept.reloads, 1);
  EXPECT_NEAR(kept.keep_load_s, 0.05 + 7 * 1.25 * 0.15, 0.03);
  // The GPU works while the host does: the reload's load came after the
  // pause, the keep-load's beside it.
  EXPECT_LT(kept.wall_s, reloaded.wall_s - 0.5);
}

TEST(Pipeline, OneSlowStretchOfHostWorkDoesNotInflateTheLoadQueuedAfterIt) {
  Harness h;
  h.gpu.SetController(kController);
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  std::vector<double> keep_load_s;
  for (const double pause : {0.0, 0.15, 0.15, 0.6, 0.15, 0.15}) {
    h.gpu.SleepS(pause);
    ScriptedLauncher launcher = h.Launcher({2000});
    auto m = h.Measure(launcher, governor);
    ASSERT_TRUE(m.ok()) << m.status();
    keep_load_s.push_back(m->keep_load_seconds);
  }
  // After the 0.6 s stretch (a database checkpoint, say) the load queued
  // is still 1.25 times the usual 0.15 s, not 1.25 times 0.6 s.
  EXPECT_NEAR(keep_load_s[3], 1.25 * 0.15, 0.01);
  EXPECT_NEAR(keep_load_s[4], 1.25 * 0.15, 0.01);
  // Reloads: the first pause (queued before any was timed) and the slow one.
  EXPECT_EQ(governor.reloads(), 2);
}

TEST(Pipeline, ARoundStartedAfterAnIdleGapIsDiscardedAndTakenAgainAfterAReload) {
  for (const int retakes : {8, 0}) {
    Harness h;
    h.tuning.max_idle_retakes = retakes;
    h.gpu.SetController(kController);
    ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
    ScriptedLauncher first = h.Launcher({2000, 2040});
    ASSERT_TRUE(h.Measure(first, governor).ok());
    // In the second GEMM's race, the host stalls 300 ms after the governor
    // prepared a round and before it is queued: a gap only the device sees.
    ScriptedLauncher second = h.Launcher({2000, 2040});
    int samples = 0;
    second.before_sample = [&] {
      if (++samples == 3) h.gpu.SleepS(0.3);
    };
    const int reloads_before = governor.reloads();
    auto m = h.Measure(second, governor);
    ASSERT_TRUE(m.ok()) << m.status();
    if (retakes == 0) {  // not looked for: the recovered round is kept
      EXPECT_EQ(m->algos[0].stats.discarded + m->algos[1].stats.discarded, 0);
      continue;
    }
    for (const tuner::AlgoResult& a : m->algos) {
      EXPECT_EQ(a.stats.discarded, 1) << "the round after the gap was not discarded";
      EXPECT_TRUE(a.clock_note.empty()) << a.clock_note;
    }
    EXPECT_EQ(governor.reloads() - reloads_before, 1) << "the gap was not made up";
  }
}

TEST(Pipeline, AReloadStopsWhenTheReadingsAreBackNotAfterAFixedTime) {
  Harness h;
  h.gpu.SetController(kController);
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  ScriptedLauncher first = h.Launcher({2000});
  ASSERT_TRUE(h.Measure(first, governor).ok());
  h.gpu.SleepS(0.01);  // a short pause needs a short reload…
  ScriptedLauncher second = h.Launcher({2000});
  ASSERT_TRUE(h.Measure(second, governor).ok());
  const double short_reload = governor.reload_s();
  h.gpu.SleepS(0.5);  // …a longer one a longer reload, below the re-warm-up
  ScriptedLauncher third = h.Launcher({2000});
  ASSERT_TRUE(h.Measure(third, governor).ok());
  const double long_reload = governor.reload_s() - short_reload;
  EXPECT_LT(short_reload, 0.1);
  EXPECT_GT(long_reload, 2 * short_reload);
  EXPECT_LT(long_reload, h.tuning.max_reload_s);
}

TEST(Pipeline, AHeavyGemmAfterALightWarmUpKeepsItsPowerCappedSamples) {
  Harness h;
  // The warm-up GEMM is light: the GPU settles at boost without a power cap.
  bool heavy = false;
  h.gpu.tamper = [&](GpuReading& r) {
    r.sm_clock_mhz = heavy ? 1410 : 1980;
    r.power_w = heavy ? 695 : 350;
    r.reasons = heavy ? kReasonSwPowerCap : 0;
  };
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  ScriptedLauncher light = h.Launcher({20});
  ASSERT_TRUE(h.Measure(light, governor).ok());
  EXPECT_DOUBLE_EQ(governor.reference_mhz(), 1980);
  heavy = true;  // 1410 MHz is under 75% of 1980: a fixed reference would discard it all
  ScriptedLauncher big = h.Launcher({5000, 5200});
  auto m = h.Measure(big, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_EQ(a.stats.discarded, 0) << "power-capped samples of a heavy GEMM were discarded";
    EXPECT_TRUE(a.clock_note.empty()) << a.clock_note;
    EXPECT_DOUBLE_EQ(a.stats.sm_clock_mhz, 1410);
  }
}

TEST(Pipeline, AClockCollapseFarUnderTheGemmsOwnStateIsDiscarded) {
  Harness h;
  int reads = 0;
  h.gpu.tamper = [&](GpuReading& r) {
    if (++reads % 4 == 0) r.sm_clock_mhz = 600;  // no reason reported, clock collapsed
  };
  ScriptedLauncher launcher = h.Launcher({2000, 2100});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.discarded, 0);
    EXPECT_GE(a.stats.sm_clock_mhz, 1380) << "a collapsed reading counted";
  }
}

TEST(Pipeline, BurstPolicyMeasuresTheBoostClockAndSaysSo) {
  Harness h;
  h.options.mode.clocks = tuner::ClockPolicy::kBurst;
  h.tuning.boost_clock_mhz = 1980;
  ScriptedLauncher launcher = h.Launcher({50, 60});
  ClockGovernor governor(tuner::ClockPolicy::kBurst, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->mode.clocks, tuner::ClockPolicy::kBurst);
  EXPECT_DOUBLE_EQ(m->settled_clock_mhz, 1980);
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.samples, 0);
    EXPECT_DOUBLE_EQ(a.stats.sm_clock_mhz, 1980) << "a power-capped sample counted";
  }
  EXPECT_NEAR(m->algos[0].stats.median_us, 50, 1.5);
}

TEST(Pipeline, BurstPolicyCoolsDownWhenTheGpuLeavesBoost) {
  Harness h;
  h.options.mode.clocks = tuner::ClockPolicy::kBurst;
  h.options.min_samples = 20;
  h.tuning.boost_clock_mhz = 1980;
  ScriptedLauncher launcher = h.Launcher({30000, 30000});  // long kernels cap the power fast
  ClockGovernor governor(tuner::ClockPolicy::kBurst, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT(h.gpu.slept_s(), 0) << "never cooled down";
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.samples, 0);
    EXPECT_GT(a.stats.discarded, 0);
    if (a.clock_note.empty()) {
      EXPECT_DOUBLE_EQ(a.stats.sm_clock_mhz, 1980);
    }
  }
}

TEST(Pipeline, ThermalSlowdownSamplesAreDiscardedAndCounted) {
  Harness h;
  int reads = 0;
  h.gpu.tamper = [&](GpuReading& r) {
    if (++reads % 3 == 0) r.reasons |= kReasonHwThermal;
  };
  ScriptedLauncher launcher = h.Launcher({2000, 2100});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.samples, 0);
    EXPECT_GT(a.stats.discarded, 0);
    EXPECT_NE(a.stats.throttle_reasons & kReasonHwThermal, 0u) << "the reason is recorded";
    EXPECT_TRUE(a.clock_note.empty());
  }
}

TEST(Pipeline, AnAlgorithmIsNeverLeftWithoutATimeBecauseOfClocks) {
  Harness h;
  h.gpu.tamper = [](GpuReading& r) { r.reasons |= kReasonSwThermal; };
  ScriptedLauncher launcher = h.Launcher({2000, 2100});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const tuner::AlgoResult& a : m->algos) {
    EXPECT_GT(a.stats.samples, 0);
    EXPECT_GT(a.stats.median_us, 0);
    EXPECT_TRUE(a.verified) << "clocks never unverify an algorithm";
    EXPECT_NE(a.clock_note.find("thermal or hardware slowdown"), std::string::npos) << a.clock_note;
  }
}

TEST(Pipeline, RacingDropsClearlySlowerAlgorithmsAndSamplesTheContenders) {
  Harness h;
  h.options.max_noise = 0.002;
  h.options.max_seconds = 2;
  ScriptedLauncher launcher = h.Launcher({1000, 1002, 1500, 3000}, 0.01);
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok()) << m.status();
  const auto samples = [&](int c) { return launcher.samples_of(c); };
  EXPECT_EQ(samples(2), h.options.min_samples) << "a clearly slower algorithm kept running";
  EXPECT_EQ(samples(3), h.options.min_samples);
  EXPECT_GT(samples(0), 3 * samples(3)) << "the contenders did not get the samples";
  EXPECT_GT(samples(1), 3 * samples(3));
  EXPECT_LT(m->algos[0].stats.median_us, m->algos[2].stats.median_us);
}

TEST(Pipeline, StopsWhenTheContendersAreKnownWithinTheNoiseBound) {
  Harness h;
  h.options.max_noise = 0.01;
  h.options.max_seconds = 60;
  ScriptedLauncher launcher = h.Launcher({1000, 2000}, 0.002);
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok());
  const tuner::SampleStats& s = m->algos[0].stats;
  EXPECT_LE((s.ci_high_us - s.ci_low_us) / 2, 0.01 * s.median_us);
  EXPECT_LT(s.samples, 100) << "sampled on long after the noise bound was met";
}

TEST(Pipeline, AWrongAlgorithmFailsVerificationWhateverItsSpeed) {
  Harness h;
  ScriptedLauncher launcher = h.Launcher({2000, 500});
  launcher.wrong = {1};
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->algos[0].verified);
  EXPECT_FALSE(m->algos[1].verified);
  EXPECT_NE(m->algos[1].verify_note.find("tolerance"), std::string::npos);
}

TEST(Pipeline, SmallKernelsAreBatchedIntoSamplesThatRotateTheCopies) {
  Harness h;
  h.operands.copies = 17;
  ScriptedLauncher launcher = h.Launcher({5});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok());
  EXPECT_GE(launcher.launches(), 17) << "fewer launches than operand copies";
  EXPECT_GE(launcher.launches() * m->algos[0].stats.median_us, 0.9 * h.tuning.target_sample_us);
  EXPECT_NEAR(m->algos[0].stats.median_us, 5 * 1980 / m->settled_clock_mhz, 0.5)
      << "samples are per launch";
  EXPECT_EQ(LaunchesPerSample(5000, 1, h.tuning), 1);
  EXPECT_EQ(LaunchesPerSample(5000, 3, h.tuning), 3);
  EXPECT_EQ(LaunchesPerSample(0.01, 1, h.tuning), h.tuning.max_launches_per_sample);
}

TEST(Pipeline, WithoutNvmlNothingIsDiscardedAndTheClockIsUnknown) {
  Harness h;
  h.gpu = ScriptedGpu::WithoutNvml();
  ScriptedLauncher launcher = h.Launcher({2000});
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(launcher, governor);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->settled_clock_mhz, 0);
  EXPECT_EQ(m->algos[0].stats.sm_clock_mhz, 0);
  EXPECT_EQ(m->algos[0].stats.discarded, 0);
  EXPECT_GE(h.gpu.NowS() - 1000, h.tuning.settle.min_s) << "the warm-up still lasts min_s";
}

TEST(Pipeline, LauncherErrorsPassThroughAndNoCandidateIsAnError) {
  Harness h;
  ScriptedLauncher broken = h.Launcher({2000});
  broken.fail_sample = absl::InternalError("CUDA: cudaErrorLaunchFailure in cudaGraphLaunch");
  ClockGovernor governor(tuner::ClockPolicy::kSustained, h.tuning);
  auto m = h.Measure(broken, governor);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cudaGraphLaunch"), std::string::npos);
  ScriptedLauncher none = h.Launcher({});
  EXPECT_EQ(h.Measure(none, governor).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace crest::measure
