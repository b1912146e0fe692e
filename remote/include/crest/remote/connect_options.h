// Where and how to reach a crestd, as the `crest` command's --server,
// --tls-ca, --tls-cert, --tls-key, --token-file (or CREST_TOKEN) and
// --timeout say it; no gRPC here (channel.h opens the channel), so that code
// that only reads the flags does not parse gRPC.
#pragma once

#include <string>

namespace crest::remote {

// A token and a CA certificate (PEM text) an in-process caller holds
// (crest.Client's token= and root_certificates=), never on a command line.
struct InMemoryCredentials {
  std::string token;       // over token_file and CREST_TOKEN
  std::string tls_ca_pem;  // over tls_ca
};

struct ConnectOptions {
  std::string server;  // HOST:PORT or unix:PATH; empty: work locally
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string token_file;  // else CREST_TOKEN, else no token
  double timeout_s = 30;
  InMemoryCredentials in_memory;
};

}  // namespace crest::remote
