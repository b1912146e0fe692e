// `crest doctor`: is this node ready to measure? Checks the build, the CUDA
// libraries the loader chose and whether they fit the driver, the GPUs, the
// state directory and the local crestd. Exit 1 when any check fails.
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "build_info.h"
#include "catalogue_reports.h"
#include "cli.h"
#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/measure/cuda_libraries.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "fleet_targets.h"
#include "outputs.h"
#include "printer.h"
#include "remote.h"
#include "table.h"

namespace crest::cli {
namespace {

using Verdict = DoctorReport::Verdict;
using Check = DoctorReport::Check;

struct DoctorFlags {
  std::string state_dir = "/var/lib/crest";
  bool no_daemon = false;
  bool no_gpu = false;
};

// 13000 → "13.0"; 130100 (cuBLASLt) → "13.1.0".
std::string CudaVersion(int v) { return StrCat(v / 1000, ".", (v % 1000) / 10); }
std::string CublasLtVersion(int v) { return StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100); }

void CheckCuda(std::vector<Check>& checks) {
  const measure::CudaLibraries libs = measure::ProbeCudaLibraries();
  if (!libs.load_error.empty()) {
    checks.push_back({"cuda-libs", Verdict::kFail, libs.load_error});
    return;
  }
  checks.push_back(
      {"cuda-libs", Verdict::kOk,
       StrCat("engine ", libs.backend_path, "; CUDA runtime ", CudaVersion(libs.runtime_version),
              " from ", libs.cudart_path.empty() ? "(linked in)" : libs.cudart_path, "; cuBLASLt ",
              CublasLtVersion(libs.cublaslt_version), " from ",
              libs.cublaslt_path.empty() ? "(linked in)" : libs.cublaslt_path)});
  if (libs.cublaslt_version / 10000 != libs.runtime_version / 1000) {
    checks.back().verdict = Verdict::kWarn;
    checks.back().detail += " (cuBLASLt and the runtime come from different CUDA major versions)";
  }
  if (libs.driver_version == 0) {
    checks.push_back({"driver", Verdict::kFail, StrCat("no usable driver: ", libs.driver_error)});
  } else if (libs.driver_version < libs.runtime_version) {
    checks.push_back({"driver", Verdict::kFail,
                      StrCat("the driver supports CUDA ", CudaVersion(libs.driver_version),
                             " but this crest's runtime is ", CudaVersion(libs.runtime_version),
                             ": update the driver, or use a bundle built against an older CUDA")});
  } else {
    checks.push_back({"driver", Verdict::kOk,
                      StrCat("supports CUDA ", CudaVersion(libs.driver_version), " (runtime ",
                             CudaVersion(libs.runtime_version), " fits)")});
  }
  auto devices = measure::ProbeDevices();
  if (!devices.ok()) {
    checks.push_back({"gpu", Verdict::kFail, std::string(devices.status().message())});
    return;
  }
  for (const auto& d : *devices) {
    const bool catalogued = !d.device.gpu_model.empty();
    checks.push_back(
        {StrCat("gpu ", d.index), catalogued ? Verdict::kOk : Verdict::kWarn,
         StrCat(d.device.name, " ", d.device.uuid, ", ", d.device.sm_count, " SMs, ",
                d.free_bytes >> 30, " of ", d.device.memory_bytes >> 30, " GiB free",
                catalogued ? StrCat(" (", d.device.gpu_model, ")")
                           : " (not in the GPU catalogue: measured fine, no predictions)")});
  }
}

void CheckStateDir(const std::string& dir, std::vector<Check>& checks) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    const bool unknown = ec && ec != std::errc::no_such_file_or_directory;
    const std::string why =
        unknown ? std::string(FromErrorCode(ec, StrCat("cannot look at '", dir, "'")).message())
                : StrCat(dir, ": not a directory");
    checks.push_back({"state-dir", Verdict::kFail,
                      StrCat(why,
                             " (create it, or give --state-dir; the systemd unit's "
                             "StateDirectory= makes it)")});
    return;
  }
  std::string probe = StrCat(dir, "/.crest-doctor-XXXXXX");
  const int fd = mkstemp(probe.data());
  if (fd < 0 || write(fd, "ok", 2) != 2 || fsync(fd) != 0) {
    if (fd >= 0) {
      close(fd);
      unlink(probe.c_str());
    }
    checks.push_back(
        {"state-dir", Verdict::kFail,
         StrCat(dir, ": cannot write there as uid ", getuid(), " (", PosixErrorText(errno), ")")});
    return;
  }
  close(fd);
  unlink(probe.c_str());
  struct statvfs fs {};
  const int64_t free_bytes =
      statvfs(dir.c_str(), &fs) == 0 ? static_cast<int64_t>(fs.f_bavail * fs.f_frsize) : -1;
  Check check{"state-dir", Verdict::kOk, StrCat(dir, " writable, ", free_bytes >> 20, " MiB free")};
  if (free_bytes >= 0 && free_bytes < (int64_t{1} << 30)) {
    check.verdict = Verdict::kWarn;
    check.detail += " (under 1 GiB: a long sweep may fill it)";
  }
  const std::string db = StrCat(dir, "/crest.db");
  if (std::filesystem::exists(db, ec)) {
    store::StoreOptions options;
    options.read_only = true;
    options.create = false;
    auto store = store::Store::Open(db, options);
    auto stats = store.ok() ? store::Stats(**store) : store.status();
    if (stats.ok()) {
      check.detail +=
          StrCat("; crest.db: schema ", stats->schema_version, ", ", Grouped(stats->measurements),
                 " measurements, ", Grouped(stats->predictions), " predictions");
    } else {
      check.verdict = Verdict::kFail;
      check.detail += StrCat("; ", stats.status().message());
    }
  }
  checks.push_back(std::move(check));
}

void CheckDaemon(std::vector<Check>& checks) {
  RemoteFlags flags = Remote();
  if (flags.server.empty()) flags.server = StrCat("127.0.0.1:", kDefaultCrestdPort);
  if (flags.timeout_s > 5) flags.timeout_s = 5;
  auto c = DaemonChannel::Open(flags);
  v1::GetNodeInfoResponse r;
  absl::Status s = c.ok()
                       ? CallUnary(*c, &v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(), &r)
                       : c.status();
  if (!s.ok()) {
    checks.push_back({"daemon", Verdict::kFail,
                      StrCat(s.message(), " (start crestd, or give --server; --no-daemon skips)")});
    return;
  }
  Check check{"daemon", Verdict::kOk,
              StrCat("crestd ", r.version(), " at ", flags.server, " on host ", r.host(), ", ",
                     r.devices_size(), " device(s), ", Grouped(r.database().measurements()),
                     " measurements")};
  if (r.devices().empty()) {
    check.verdict = Verdict::kWarn;
    check.detail += StrCat(" (it sees no GPU: ", r.device_error(), ")");
  }
  checks.push_back(std::move(check));
}

absl::Status RunDoctor(const DoctorFlags& f, Io& io) {
  std::vector<Check> checks;
  // A node that only predicts (--no-gpu) needs no CUDA parts.
  checks.push_back({"build", build::kCudaEnabled || f.no_gpu ? Verdict::kOk : Verdict::kFail,
                    StrCat("crest ", build::kVersion, ", CUDA parts ",
                           build::kCudaEnabled ? "built" : "not built", " (", build::kCudaReason,
                           ")", f.no_gpu ? "; GPU checks skipped (--no-gpu)" : "")});
  if (measure::CublasLtBackendBuilt() && !f.no_gpu) CheckCuda(checks);
  CheckStateDir(f.state_dir, checks);
  if (!f.no_daemon) CheckDaemon(checks);

  DoctorReport report{std::move(checks), f.no_gpu};
  PrinterFor(io)->Print(report);
  if (report.Failed() > 0) return absl::FailedPreconditionError(DoctorFailure(report));
  return absl::OkStatus();
}

}  // namespace

Command RegisterDoctor(CLI::App& root) {
  auto f = std::make_shared<DoctorFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "doctor",
      "Check this node: CUDA libraries found and matching the driver, GPUs visible, the state "
      "directory writable, the crestd reachable (--server, default 127.0.0.1:50051); exit 1 when "
      "a check fails");
  AddOption(*cmd.app, "--state-dir", f->state_dir, "crestd's state directory").ShowDefault();
  AddFlag(*cmd.app, "--no-daemon", f->no_daemon, "skip the daemon check");
  AddFlag(*cmd.app, "--no-gpu", f->no_gpu,
          "skip the CUDA, driver and GPU checks (a node that only predicts)");
  cmd.run = [f](Io& io) { return RunDoctor(*f, io); };
  return cmd;
}

}  // namespace crest::cli
