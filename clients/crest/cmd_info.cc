// `crest info`: the backends built into this crest and the devices found.
#include "build_info.h"
#include "cli.h"
#include "crest/tuner/predictor.h"
#include "json_views.h"
#include "measure_flags.h"
#include "table.h"

namespace crest::cli {
namespace {

absl::Status RunInfo(Io& io) {
  nlohmann::json info = BackendsAndDevices();
  info["schema_version"] = kJsonSchemaVersion;
  info["version"] = build::kVersion;
  info["predictor"] = std::string(kPredictorVersion);
  if (io.json) {
    io.out << info.dump(2) << '\n';
    return absl::OkStatus();
  }
  io.out << "crest " << build::kVersion << "\nbackends:\n"
         << "  model     built (analytic predictor " << kPredictorVersion << ", predictions only)\n"
         << "  cublaslt  " << (build::kCudaEnabled ? "built" : "not built") << " ("
         << build::kCudaReason << ")\n";
  if (info["devices"].empty()) {
    io.out << "devices: none (" << info.value("device_error", std::string("no CUDA device"))
           << ")\n";
    return absl::OkStatus();
  }
  io.out << "devices:\n";
  for (const auto& d : info["devices"]) {
    io.out << "  [" << d["index"].get<int>() << "] " << d["name"].get<std::string>() << " "
           << d["uuid"].get<std::string>() << " (" << d["gpu_model"].get<std::string>() << ", "
           << d["sm_count"].get<int>() << " SMs, cc " << d["compute_capability"].get<std::string>()
           << ", L2 " << (d["l2_bytes"].get<int64_t>() >> 20) << " MiB, "
           << (d["memory_bytes"].get<int64_t>() >> 30) << " GiB, SM "
           << d["sm_clock_mhz"].get<int>() << " MHz); driver "
           << d["software"]["driver"].get<std::string>() << ", CUDA runtime "
           << d["software"]["cuda_runtime"].get<int64_t>() << ", cuBLASLt "
           << d["software"]["cublaslt"].get<int64_t>() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

Command RegisterInfo(CLI::App& root) {
  Command cmd;
  cmd.app = root.add_subcommand("info", "Show the backends built in and the CUDA devices found");
  cmd.run = RunInfo;
  return cmd;
}

}  // namespace crest::cli
