// Test support: a real crestd child process on an ephemeral loopback port,
// with its log in the state directory.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"

namespace crest::testing {

class CrestdProcess final {
 public:
  CrestdProcess() = default;
  ~CrestdProcess();  // SIGKILLs a daemon still running

  // Starts `binary` with --listen 127.0.0.1:0 --state-dir DIR
  // [--shutdown-grace 2, unless `args` gives one] plus `args`; false (and
  // the log in *why) when it does not come up within 30 s.
  bool Start(const std::string& binary, const std::string& state_dir,
             const std::vector<std::string>& args, std::string* why);
  // Sends `signal` and waits; the wait status.
  int Stop(int signal);

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const;
  std::shared_ptr<grpc::Channel> Channel() const;
  std::unique_ptr<v1::Crest::Stub> Stub() const { return v1::Crest::NewStub(Channel()); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string state_dir_;
};

// GET `path` from 127.0.0.1:`port` over HTTP/1.0 (crestd's /metrics): the
// whole response, headers included; empty when nothing answers.
std::string HttpGet(int port, const std::string& path);

}  // namespace crest::testing
