// crestd's command line: the flags that fill a ServerConfig, shared by the
// crestd executable and by anything else that starts a Server from flags.
#pragma once

#include <string>

#include "crest/common/cmdline.h"
#include "server.h"

namespace crest::service {

struct DaemonFlags {
  ServerConfig server;
  std::string log_level = "info";
};

// Adds every crestd flag (--listen, --state-dir, TLS, tokens, limits,
// metrics, calibrations, --config) with its default shown in --help.
void AddDaemonFlags(CLI::App& app, DaemonFlags& flags);

}  // namespace crest::service
