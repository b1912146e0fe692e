// Internal to the crest CLI: the global flags that send a command to a
// crestd (--server, --tls-ca, --tls-cert, --tls-key, --token-file or the
// CREST_TOKEN environment variable, --timeout). A command that only asks
// whether a server was given includes this; one that talks to it, remote.h.
#pragma once

#include "crest/common/cmdline.h"
#include "crest/remote/connect_options.h"

namespace crest::cli {

using RemoteFlags = remote::ConnectOptions;

void AddRemoteFlags(CLI::App& root);
const RemoteFlags& Remote();
// This thread's invocation's token and CA certificate (PEM) in memory, over
// --token-file/CREST_TOKEN and --tls-ca (RunCli's in-process caller).
void UseInMemoryCredentials(const remote::InMemoryCredentials& credentials);

}  // namespace crest::cli
