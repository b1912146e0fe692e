// Internal to the crest CLI: the global flags that send a command to a
// crestd (--server, --tls-ca, --tls-cert, --tls-key, --token-file or the
// CREST_TOKEN environment variable, --timeout). Commands that can run
// remotely call Remote() and, when its server is set, ask the daemon through
// crest::remote (remote/) instead of a local database.
#pragma once

#include "crest/common/cmdline.h"
#include "crest/remote/channel.h"

namespace crest::cli {

using RemoteFlags = remote::ConnectOptions;
using remote::CallUnary;
using remote::Credentials;
using remote::DaemonChannel;
using remote::LoadCredentials;

void AddRemoteFlags(CLI::App& root);
const RemoteFlags& Remote();
// This thread's invocation's token and CA certificate (PEM) in memory, over
// --token-file/CREST_TOKEN and --tls-ca (RunCli's in-process caller).
void UseInMemoryCredentials(const remote::InMemoryCredentials& credentials);

}  // namespace crest::cli
