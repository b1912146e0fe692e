// crestd's process around a Server: parse the flags, block SIGINT/SIGTERM,
// start, wait for a signal, shut down. Exit codes: 0 stopped cleanly, 2 bad
// flags or config, 1 the machine refused (database, port).
#pragma once

#include <functional>

#include "crest/common/cmdline.h"
#include "server_flags.h"

namespace crest::service {

// `extend` (may be empty) adds flags of its own to the app and, once they
// are parsed, adjusts the config: how a testing build injects a backend.
struct MainExtension {
  std::function<void(CLI::App&)> add_flags;
  std::function<void(ServerConfig&)> adjust;
};

int CrestdMain(int argc, char** argv, const MainExtension& extension = {});

}  // namespace crest::service
