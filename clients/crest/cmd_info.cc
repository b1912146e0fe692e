// `crest info`: the backends built into this crest and the devices found.
#include "build_info.h"
#include "cli.h"
#include "crest/tuner/predictor.h"
#include "json_views.h"
#include "local_devices.h"
#include "remote.h"
#include "table.h"

namespace crest::cli {
namespace {

absl::Status RunRemoteInfo(Io& io) {
  auto connection = DaemonChannel::Open(Remote());
  if (!connection.ok()) return connection.status();
  v1::GetNodeInfoResponse r;
  if (auto s = CallUnary(*connection, &v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &r);
      !s.ok()) {
    return s;
  }
  if (io.json) {
    io.out << ProtoJson(r) << '\n';
    return absl::OkStatus();
  }
  io.out << "crestd " << r.version() << " at " << Remote().server << " (host " << r.host()
         << ")\npredictor: " << r.model_version() << "\nbackends:\n";
  for (const auto& b : r.backends()) {
    io.out << "  " << b.name() << std::string(10 - std::min<size_t>(9, b.name().size()), ' ')
           << (b.built() ? "built" : "not built") << " (" << b.detail() << ")\n";
  }
  if (r.devices().empty()) {
    io.out << "devices: none (" << r.device_error() << ")\n";
  } else {
    io.out << "devices:\n";
    for (const auto& d : r.devices()) {
      io.out << "  " << d.name() << " " << d.uuid() << " (" << d.gpu_model() << ", " << d.sm_count()
             << " SMs, cc " << d.compute_capability() << ", " << (d.memory_bytes() >> 30)
             << " GiB, " << (d.free_bytes() >> 30) << " GiB free)\n";
    }
  }
  const auto& db = r.database();
  io.out << "database: " << db.path() << " (schema " << db.schema_version() << ", "
         << Grouped(db.file_bytes()) << " bytes): " << Grouped(db.measurements())
         << " measurements (" << Grouped(db.verified_measurements()) << " verified), "
         << Grouped(db.predictions()) << " predictions, " << db.devices() << " devices\njobs:";
  if (db.jobs_by_state().empty()) io.out << " none";
  for (const auto& [state, n] :
       std::map<std::string, int64_t>(db.jobs_by_state().begin(), db.jobs_by_state().end())) {
    io.out << " " << state << "=" << n;
  }
  io.out << '\n';
  return absl::OkStatus();
}

absl::Status RunInfo(Io& io) {
  if (!Remote().server.empty()) return RunRemoteInfo(io);
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
  cmd.app = root.add_subcommand(
      "info",
      "Show the backends built in and the CUDA devices found (with --server: the daemon's, and "
      "its database)");
  cmd.run = RunInfo;
  return cmd;
}

}  // namespace crest::cli
