// The measurement tests' GPU: the library's simulated GPU (simulated_gpu.h)
// on the recorded H100 trace of tests/data/h100-2026-11-22/.
#pragma once

#include <string>
#include <vector>

#include "crest/measure/simulated_gpu.h"
#include "gtest/gtest.h"

namespace crest::measure::testing {

using ScriptedGpu = SimulatedGpu;
using ScriptedLauncher = SimulatedLauncher;

// The trace at `path`; fails the test when it cannot be read.
inline std::vector<TraceRow> LoadTestTrace(const std::string& path) {
  auto rows = measure::LoadTrace(path);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *std::move(rows) : std::vector<TraceRow>{TraceRow{1980, 100, 0}};
}

// The recorded H100 trace.
inline std::vector<TraceRow> H100Trace() {
  return LoadTestTrace(std::string(CREST_TEST_DATA_DIR) +
                       "/h100-2026-11-22/nvidia-smi-clock-trace.csv");
}

// The recorded H100 as the tests script it. Rows of the trace (0-based):
// idle at boost up to 16, under load from 17, the last row under load 115.
inline ScriptedGpu H100() { return ScriptedGpu(H100Trace(), 16, 17, 115); }

}  // namespace crest::measure::testing
