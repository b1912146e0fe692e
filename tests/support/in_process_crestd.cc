#include "in_process_crestd.h"

#include <algorithm>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "delayed_backend.h"
#include "log.h"
#include "server_flags.h"

namespace crest::testing {

InProcessCrestd::~InProcessCrestd() { Stop(); }

bool InProcessCrestd::Start(const std::string& state_dir, const std::vector<std::string>& args,
                            std::string* why, Env* env) {
  CLI::App app;
  service::DaemonFlags flags;
  service::AddDaemonFlags(app, flags);
  double delay_ms = 0;
  app.add_option("--model-gemm-delay-ms", delay_ms);
  std::vector<std::string> argv = {"--listen", "127.0.0.1:0",      "--state-dir",
                                   state_dir,  "--shutdown-grace", "2"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    *why = e.what();
    return false;
  }
  flags.server.env = env;
  service::SetLogSink([log = log_](std::string_view line) {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->text.append(line);
    std::fwrite(line.data(), 1, line.size(), stderr);
  });
  if (delay_ms > 0) flags.server.make_backend = DelayedModelBackends(delay_ms);
  if (make_backend) flags.server.make_backend = make_backend;
  auto server = service::Server::Start(std::move(flags.server));
  if (!server.ok()) {
    *why = std::string(server.status().message());
    return false;
  }
  server_ = *std::move(server);
  return true;
}

void InProcessCrestd::Stop() {
  if (server_ != nullptr) server_->Shutdown();
  server_.reset();
  service::SetLogSink(nullptr);
}

std::string InProcessCrestd::log() const {
  std::lock_guard<std::mutex> lock(log_->mutex);
  return log_->text;
}

std::shared_ptr<grpc::Channel> InProcessCrestd::Channel() const {
  return grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
}

}  // namespace crest::testing
