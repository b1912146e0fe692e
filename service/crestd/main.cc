// crestd: the Crest daemon. This version serves lookups, d_ff rankings,
// predictions and node information from the node's database, with standard
// gRPC health checking and reflection; the job queue comes next.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "crest/store/store.h"
#include "crest_service.h"
#include "log.h"

namespace {

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string state_dir = "./var";
  std::string log_level = "info";
  std::string port_file;
  bool insecure = false;
  int max_message_bytes = 4 << 20;
  double shutdown_grace_s = 10;
};

// HOST:PORT with a numeric port, or unix:PATH.
bool IsAddress(const std::string& address) {
  if (address.starts_with("unix:")) return address.size() > 5;
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  return address.find_first_not_of("0123456789", colon + 1) == std::string::npos;
}

bool IsLoopback(const std::string& address) {
  return address.starts_with("unix:") || address.starts_with("127.") ||
         address.starts_with("localhost:") || address.starts_with("[::1]:");
}

int Serve(const Flags& f) {
  using crest::crestd::Level;
  using crest::crestd::Log;
  if (!IsAddress(f.listen)) {
    std::cerr << "crestd: error: --listen '" << f.listen
              << "' is not HOST:PORT (port 0 picks a free one) or unix:PATH\n";
    return 2;
  }
  if (!IsLoopback(f.listen)) {
    if (!f.insecure) {
      std::cerr << "crestd: error: --listen " << f.listen
                << " is not a loopback address; TLS is not supported in this version, so "
                   "serving it needs --insecure\n";
      return 2;
    }
    Log(Level::kWarn, "insecure_listen",
        {{"address", f.listen}, {"reason", "non-loopback without TLS (--insecure)"}});
  }
  std::error_code ec;
  std::filesystem::create_directories(f.state_dir, ec);
  const std::string db_path = (std::filesystem::path(f.state_dir) / "crest.db").string();
  {  // Create or upgrade the database once, as the writer would.
    auto db = crest::store::Store::Open(db_path);
    if (!db.ok()) {
      std::cerr << "crestd: error: " << db.status().message() << "\n";
      return 1;
    }
  }

  // Signals are taken by sigwait below, never by gRPC's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  crest::crestd::CrestService service(db_path);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(f.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(f.max_message_bytes);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (port == 0 && !f.listen.starts_with("unix:"))) {
    std::cerr << "crestd: error: cannot listen on " << f.listen << "\n";
    return 1;
  }
  const std::string bound =
      f.listen.starts_with("unix:")
          ? f.listen
          : f.listen.substr(0, f.listen.rfind(':') + 1) + std::to_string(port);
  if (!f.port_file.empty()) {
    std::ofstream(f.port_file + ".tmp") << port << "\n";
    std::filesystem::rename(f.port_file + ".tmp", f.port_file, ec);
  }
  Log(Level::kInfo, "listening", {{"address", bound}, {"db", db_path}});

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Log(Level::kInfo, "shutting_down", {{"signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}});
  server->GetHealthCheckService()->SetServingStatus(false);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(f.shutdown_grace_s * 1000));
  server->Shutdown(deadline);
  server->Wait();
  Log(Level::kInfo, "stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "crestd: the Crest daemon. Serves d_ff rankings, GEMM lookups, predictions and "
      "node information over gRPC (package crest.v1), with grpc.health.v1 and reflection."};
  Flags f;
  app.add_option("--listen", f.listen, "HOST:PORT or unix:PATH (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--state-dir", f.state_dir, "directory of the database (crest.db)")
      ->capture_default_str();
  app.add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--port-file", f.port_file, "write the port listened on to this file");
  app.add_flag("--insecure", f.insecure,
               "allow a non-loopback --listen without TLS (logs a warning)");
  app.add_option("--max-message-bytes", f.max_message_bytes, "largest request accepted [bytes]")
      ->capture_default_str();
  app.add_option("--shutdown-grace", f.shutdown_grace_s,
                 "seconds in-flight calls get after SIGTERM/SIGINT")
      ->capture_default_str();
  app.set_version_flag("--version", std::string("crestd ") + CREST_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  crest::crestd::Level level;
  if (!crest::crestd::ParseLogLevel(f.log_level, &level)) {
    std::cerr << "crestd: error: --log-level '" << f.log_level
              << "' is not debug, info, warn or error\n";
    return 2;
  }
  crest::crestd::SetLogLevel(level);
  return Serve(f);
}
