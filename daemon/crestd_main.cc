#include "crestd_main.h"

#include <pthread.h>
#include <signal.h>

#include <iostream>

#include "log.h"

namespace crest::crestd {
namespace {

constexpr const char* kAbout =
    "crestd: the Crest daemon. Serves d_ff rankings, GEMM lookups, predictions, node "
    "information and database snapshots over gRPC (package crest.v1, with grpc.health.v1 and "
    "reflection), and runs sweep jobs from a persistent queue: one runner per GPU, one for "
    "the analytic model.";

// Blocks SIGINT and SIGTERM in this thread, before any other starts, so that
// only sigwait takes them, never gRPC's or the runners' threads.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int Fail(const absl::Status& status) {
  std::cerr << "crestd: error: " << status.message() << "\n";
  return absl::IsInvalidArgument(status) ? 2 : 1;
}

}  // namespace

int CrestdMain(int argc, char** argv, const MainExtension& extension) {
  CLI::App app{kAbout};
  DaemonFlags flags;
  AddDaemonFlags(app, flags);
  if (extension.add_flags) extension.add_flags(app);
  app.set_version_flag("--version", std::string("crestd ") + CREST_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  Level level;
  if (!ParseLogLevel(flags.log_level, &level)) {
    std::cerr << "crestd: error: --log-level '" << flags.log_level
              << "' is not debug, info, warn or error\n";
    return 2;
  }
  SetLogLevel(level);
  if (extension.adjust) extension.adjust(flags.server);

  sigset_t signals = BlockStopSignals();
  auto server = Server::Start(std::move(flags.server));
  if (!server.ok()) return Fail(server.status());
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Log(Level::kInfo, "shutting_down", {{"signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}});
  (*server)->Shutdown();
  Log(Level::kInfo, "stopped");
  return 0;
}

}  // namespace crest::crestd
