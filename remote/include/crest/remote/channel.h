// Talking to a crestd: where and how (ConnectOptions, the `crest` command's
// --server, --tls-ca, --tls-cert, --tls-key, --token-file or CREST_TOKEN,
// and --timeout), a channel with its token and deadline, and gRPC errors as
// absl errors naming the server. Used by every client of crestd that speaks
// C++: the CLI and, through it, the Python package in process.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "crest/remote/connect_options.h"
#include "crest/v1/crest.grpc.pb.h"

namespace crest::remote {

// How to reach any crestd: the token, the channel credentials (TLS files
// read) and the call timeout. Loaded once, shared by every connection a
// command opens (`crest fleet` opens one per node).
struct Credentials {
  std::string token;
  std::shared_ptr<grpc::ChannelCredentials> channel;
  double timeout_s = 30;
};

// Validates the options and reads the files they name. InvalidArgument names
// the option by its command-line flag (--token-file, --tls-ca, …) and never
// prints a token.
absl::StatusOr<Credentials> LoadCredentials(const ConnectOptions& options);

class DaemonChannel final {
 public:
  // Validates the options and reads the files they name; does not connect yet.
  static absl::StatusOr<DaemonChannel> Open(const ConnectOptions& options);
  // A channel to `server` with credentials already loaded; does not connect yet.
  static DaemonChannel Open(const std::string& server, const Credentials& credentials);

  v1::Crest::Stub& stub() { return *stub_; }
  const std::string& server() const { return server_; }
  // A context with the token and, for unary calls, the deadline.
  std::unique_ptr<grpc::ClientContext> Context(bool with_deadline = true) const;
  // "crestd at HOST:PORT: <message>", with the gRPC code mapped onto absl's.
  absl::Status Error(const grpc::Status& status) const;

 private:
  std::string server_;
  std::string token_;
  double timeout_s_ = 30;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Crest::Stub> stub_;
};

// Calls a unary method; the response, or the error from DaemonChannel::Error.
template <typename Request, typename Response, typename Method>
absl::Status CallUnary(DaemonChannel& c, Method method, const Request& request,
                       Response* response) {
  auto context = c.Context();
  return c.Error(((c.stub()).*method)(context.get(), request, response));
}

}  // namespace crest::remote
