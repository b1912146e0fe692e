#include "fake_backend.h"

#include "fake_results.h"

namespace crest::testing {

const GpuSpec& FakeMeasuringBackend::Gpu() const { return **FindGpu("h100"); }
DeviceInfo FakeMeasuringBackend::Device() const { return FakeH100(uuid); }
SoftwareInfo FakeMeasuringBackend::Software() const { return FakeSoftware(cublaslt); }

absl::Status FakeMeasuringBackend::Reserve(std::span<const GemmShape> plan) {
  reserved.assign(plan.begin(), plan.end());
  return absl::OkStatus();
}

absl::StatusOr<GemmOutcome> FakeMeasuringBackend::Run(const GemmShape& g) {
  ++runs;
  if (failing.contains(g.k)) return absl::ResourceExhaustedError("out of device memory");
  const double us = (g.k == 10944 || g.n == 2 * 10944) ? 100 : 200 + static_cast<double>(g.k % 7);
  GemmOutcome out;
  out.measured = FakeMeasurement(g, us * slowdown, 2);
  out.measured->mode = mode;
  out.measured->host = host;
  return out;
}

}  // namespace crest::testing
