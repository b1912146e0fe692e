#include "remote.h"

#include "cli.h"

namespace crest::cli {
namespace {

// One invocation's flags: per thread, and reset by AddRemoteFlags, so that
// invocations in one process (the Python extension) never see another's.
RemoteFlags& Flags() {
  thread_local RemoteFlags flags;
  return flags;
}

}  // namespace

void AddRemoteFlags(CLI::App& root) {
  RemoteFlags& f = Flags();
  f = RemoteFlags{};
  AddOption(root, "--server", f.server,
            "ask the crestd at HOST:PORT (or unix:PATH) instead of working locally")
      .FromEnv("CREST_SERVER");
  AddOption(root, "--tls-ca", f.tls_ca, "with --server: CA certificate (PEM); turns TLS on");
  AddOption(root, "--tls-cert", f.tls_cert, "with --server: client certificate (PEM), mutual TLS");
  AddOption(root, "--tls-key", f.tls_key, "with --server: client key (PEM)");
  AddOption(root, "--token-file", f.token_file,
            "with --server: file holding the bearer token (or set CREST_TOKEN)");
  AddOption(root, "--timeout", f.timeout_s, "with --server: seconds a call may take").ShowDefault();
}

const RemoteFlags& Remote() { return Flags(); }

void UseInMemoryCredentials(const remote::InMemoryCredentials& credentials) {
  Flags().in_memory = credentials;
}

}  // namespace crest::cli
