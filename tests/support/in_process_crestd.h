// Test support: a crestd Server in this process on an ephemeral loopback
// port, configured by the same flags as the crestd executable (plus
// --model-gemm-delay-ms), for tests of the service where a process is not
// the point.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "server.h"

namespace crest::testing {

class InProcessCrestd final {
 public:
  InProcessCrestd() = default;
  ~InProcessCrestd();  // Stop()s

  // Starts with --listen 127.0.0.1:0 --state-dir DIR --shutdown-grace 2 plus
  // `args`; false (and why in *why) when the flags or the start fail.
  // `env`, when given, replaces the real machine's.
  bool Start(const std::string& state_dir, const std::vector<std::string>& args, std::string* why,
             Env* env = nullptr);
  // Set before Start: makes every lane's backend (a scripted device) instead
  // of the flags' choice.
  service::BackendMaker make_backend;

  // Shuts the server down as SIGTERM would.
  void Stop();

  // What the server logged since Start (the process-wide log is captured
  // while it runs; also copied to stderr).
  std::string log() const;

  int port() const { return server_ == nullptr ? 0 : server_->port(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port()); }
  std::shared_ptr<grpc::Channel> Channel() const;
  std::unique_ptr<v1::Crest::Stub> Stub() const { return v1::Crest::NewStub(Channel()); }

 private:
  std::unique_ptr<service::Server> server_;
  struct CapturedLog {
    std::mutex mutex;
    std::string text;
  };
  std::shared_ptr<CapturedLog> log_ = std::make_shared<CapturedLog>();
};

}  // namespace crest::testing
