#include "crestd_main.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "log.h"

namespace crest::service {
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

// glibc's allocator, set for a process that serves for months: requests of
// up to --max-message-bytes from many gRPC threads left memory freed but
// kept (125 MB of 363 MB RSS after the 1,000,000-request soak). Four arenas
// at most, and buffers of 128 KiB and more always mmapped (the threshold
// fixed, so glibc does not raise it after the first large free and carve
// such buffers from the arenas): 23-33 MB kept, RSS 274-284 MB (docs/crestd.md).
// An arena's free top is given back past 8 MiB, not glibc's 128 KiB: each
// give-back is a TLB shoot-down (a hypervisor exit on every CPU of a VM) and
// the next answer faults the pages in again, which made uncached answers
// from many clients at once 1.1-3x as costly from run to run; the gauges'
// malloc_trim every 10 s gives the rest back (the soak's RSS at the end:
// 75-86 MB with it, 75-80 MB without; docs/crestd.md, "crestd on a
// completion queue").
// MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ in the
// environment win.
void ConfigureAllocator() {
  constexpr int kArenas = 4;
  constexpr int kMmapThresholdBytes = 128 * 1024;
  constexpr int kTrimThresholdBytes = 8 * 1024 * 1024;
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && mallopt(M_ARENA_MAX, kArenas) != 1) {
    Log(Level::kWarn, "allocator", {{"error", "mallopt(M_ARENA_MAX) refused"}});
  }
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr &&
      mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) != 1) {
    Log(Level::kWarn, "allocator", {{"error", "mallopt(M_MMAP_THRESHOLD) refused"}});
  }
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr &&
      mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) != 1) {
    Log(Level::kWarn, "allocator", {{"error", "mallopt(M_TRIM_THRESHOLD) refused"}});
  }
}

// Debian builds Abseil without NDEBUG, so every absl::Mutex lock (gRPC takes
// several a call) runs Abseil's debug-only deadlock detection: a global
// lock-order graph updated under its own lock. crestd's locks are its own
// std::mutex; the graph only costs gRPC's calls.
void SkipDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
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
  ConfigureAllocator();
  SkipDeadlockDetection();
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

}  // namespace crest::service
