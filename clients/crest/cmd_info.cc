// `crest info`: the backends built into this crest and the devices found,
// or (--server) a crestd's, with its database.
#include "cli.h"
#include "info_report.h"
#include "printer.h"
#include "remote.h"

namespace crest::cli {
namespace {

absl::StatusOr<InfoReport> AskDaemon() {
  auto connection = DaemonChannel::Open(Remote());
  if (!connection.ok()) return connection.status();
  v1::GetNodeInfoResponse response;
  if (auto s = CallUnary(*connection, &v1::Crest::Stub::GetNodeInfo, v1::GetNodeInfoRequest(),
                         &response);
      !s.ok()) {
    return s;
  }
  return RemoteInfo(response, Remote().server);
}

absl::Status RunInfo(Io& io) {
  auto report = Remote().server.empty() ? absl::StatusOr<InfoReport>(LocalInfo()) : AskDaemon();
  if (!report.ok()) return report.status();
  PrinterFor(io)->Print(*report);
  return absl::OkStatus();
}

}  // namespace

Command RegisterInfo(CLI::App& root) {
  Command cmd;
  cmd.app = AddCommand(
      root, "info",
      "Show the backends built in and the CUDA devices found (with --server: the daemon's, and "
      "its database)");
  cmd.run = RunInfo;
  return cmd;
}

}  // namespace crest::cli
