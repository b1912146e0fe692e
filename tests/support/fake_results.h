// Test support: scripted devices, software and measurements, so the measured
// paths run without a GPU.
#pragma once

#include <string>

#include "crest/tuner/device_info.h"
#include "crest/tuner/measurement.h"

namespace crest::testing {

tuner::DeviceInfo FakeH100(const std::string& uuid = "GPU-fake-0",
                           const std::string& host = "node0");
tuner::SoftwareInfo FakeSoftware(int64_t cublaslt = 130100);

// A measurement of `gemm` with `algos` algorithms, cold and sustained, in
// the heuristic's order (algorithm i has heuristic_rank i);
// algorithm i has median base_us·(1 + i/10) with a ±1% interval, tile
// 256x128 (or 128x128 for odd i), verified unless i == unverified_index,
// whose median is the lowest of all.
tuner::MeasuredGemm FakeMeasurement(const tuner::GemmShape& gemm, double base_us, int algos = 3,
                                    int unverified_index = -1);

}  // namespace crest::testing
