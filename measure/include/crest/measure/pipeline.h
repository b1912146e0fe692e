// One GEMM's measurement as a pipeline of small steps (nvbench's
// measure_cold is the model): size the samples, bring the GPU to the clock
// policy's state, race the candidate algorithms, summarize, verify. Every
// step is device-free; the device comes in through GemmLauncher, GpuMonitor
// and EngineClock (launcher.h), so tests drive it with scripted timings,
// clocks and power, and with the recorded H100 trace.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/measure/clock_governor.h"
#include "crest/measure/clock_policy.h"
#include "crest/measure/launcher.h"
#include "crest/measure/options.h"
#include "crest/measure/verification.h"
#include "crest/tuner/measurement.h"

namespace crest::measure {

// Launches per sample: enough to run target_sample_us, at least one per
// operand copy (so every sample rotates through them), at most the cap.
int LaunchesPerSample(double one_launch_us, int copies, const EngineTuning& tuning);

// Where the GEMM's operands are, for the verification references.
struct GemmOperands {
  OperandSource source;
  int copies = 1;
};

// Measures one GEMM: sizes the samples, prepares the clocks, races the
// launcher's candidates, summarizes each one's kept samples and verifies
// each one's output; sustained, it queues load to cover the host's graph
// building and, at its end, the host's work until the next GEMM. An
// algorithm always gets a time: when the clock policy discarded all its
// samples they are kept and its clock_note says why.
// Errors of the launcher pass through; InvalidArgument when it has no
// candidate.
absl::StatusOr<tuner::MeasuredGemm> MeasureGemm(const tuner::GemmShape& gemm,
                                                const MeasureOptions& options,
                                                const GemmOperands& operands,
                                                GemmLauncher& launcher, GpuMonitor& monitor,
                                                EngineClock& clock, ClockGovernor& governor,
                                                const EngineTuning& tuning);

}  // namespace crest::measure
