#include "measure_flags.h"

#include "build_info.h"
#include "crest/common/str_cat.h"
#include "json_views.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace crest::cli {

void AddMeasureFlags(CLI::App& app, MeasureFlags& f) {
  app.add_option("--device", f.device, "cublaslt: CUDA device index")->capture_default_str();
  app.add_option("--top-k", f.top_k, "cublaslt: heuristic candidates per GEMM")
      ->capture_default_str();
  app.add_flag("--exhaustive", f.exhaustive,
               "cublaslt: walk algorithm capabilities instead of the heuristic's top K");
  app.add_option("--max-algos", f.max_algos, "cublaslt: cap on exhaustive candidates per GEMM")
      ->capture_default_str();
  app.add_flag("--warm", f.warm, "cublaslt: warm L2 (default: cold, rotating operand copies)");
  app.add_option("--max-noise", f.max_noise, "cublaslt: stop sampling under this stdev/mean")
      ->capture_default_str();
  app.add_option("--min-samples", f.min_samples, "cublaslt: samples per algorithm at least")
      ->capture_default_str();
  app.add_option("--max-seconds", f.max_seconds, "cublaslt: sampling time per algorithm at most")
      ->capture_default_str();
}

absl::StatusOr<std::unique_ptr<Backend>> MakeMeasuringBackend(const MeasureFlags& f) {
  if (f.top_k < 1 || f.top_k > 64) {
    return absl::InvalidArgumentError(StrCat("top-k must be between 1 and 64 (got ", f.top_k, ")"));
  }
  if (f.max_noise <= 0 || f.max_noise > 0.5) {
    return absl::InvalidArgumentError(
        StrCat("max-noise must be in (0, 0.5] (got ", f.max_noise, ")"));
  }
#ifdef CREST_HAVE_CUDA
  measure::CublasLtOptions options;
  options.device = f.device;
  options.top_k = f.top_k;
  options.exhaustive = f.exhaustive;
  options.max_algos = f.max_algos;
  options.cold_l2 = !f.warm;
  options.stopping.max_relative_noise = f.max_noise;
  options.stopping.min_samples = f.min_samples;
  options.stopping.max_seconds = f.max_seconds;
  return measure::MakeCublasLtBackend(options);
#else
  (void)f;
  return absl::FailedPreconditionError(StrCat(
      "backend: the cuBLASLt backend is not built into this crest (", build::kCudaReason, ")"));
#endif
}

nlohmann::json BackendsAndDevices() {
  nlohmann::json out;
  out["backends"] =
      nlohmann::json::array({{{"name", "model"}, {"built", true}, {"measures", false}}});
  out["backends"].push_back({{"name", "cublaslt"},
                             {"built", build::kCudaEnabled},
                             {"measures", true},
                             {"why", build::kCudaReason}});
  out["devices"] = nlohmann::json::array();
#ifdef CREST_HAVE_CUDA
  auto devices = measure::ProbeDevices();
  if (!devices.ok()) {
    out["device_error"] = std::string(devices.status().message());
  } else {
    for (const auto& d : *devices) {
      nlohmann::json dev = DeviceJson(d.device);
      dev["index"] = d.index;
      dev["free_bytes"] = d.free_bytes;
      dev["software"] = SoftwareJson(d.software);
      out["devices"].push_back(dev);
    }
  }
#else
  out["device_error"] = "this crest was built without CUDA, so it cannot look for devices";
#endif
  return out;
}

}  // namespace crest::cli
