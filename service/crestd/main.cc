// crestd: the Crest daemon. Serves d_ff rankings, GEMM lookups, predictions,
// node information and database snapshots over gRPC, and runs sweep jobs
// from a persistent queue (one runner per GPU, plus one for the model).
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "auth.h"
#include "crest/common/host_port.h"
#include "crest/common/read_file.h"
#include "crest/service/backend_factory.h"
#include "crest/tuner/calibration.h"
#include "crest/store/store.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest_service.h"
#include "job_queue.h"
#include "log.h"
#include "metrics.h"
#ifdef CREST_HAVE_CUDA
#include "crest/measure/cuda_backend.h"
#endif

namespace {

using crest::crestd::Level;
using crest::crestd::Log;

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string state_dir = "./var";
  std::string log_level = "info";
  std::string port_file;
  bool insecure = false;
  int max_message_bytes = 4 << 20;
  double shutdown_grace_s = 10;
  std::string tls_cert, tls_key, tls_client_ca;
  std::string token_file;
  bool auth_reads = false;
  int64_t max_job_gemms = 200'000;
  int max_queued_per_client = 32;
  int max_streams = 64;
  std::string metrics_listen;
  std::string metrics_port_file;
  double model_gemm_delay_ms = 0;
  std::vector<std::string> calibrations;
};

// The predictor calibrations this node answers with: the shipped ones, then
// <state-dir>/calibrations/*.json (a node's own refits), then --calibration
// files; a later one replaces an earlier one for the same GPU and dtype.
std::string LoadCalibrations(const Flags& f) {
  std::vector<std::string> files;
  std::error_code ec;
  const auto dir = std::filesystem::path(f.state_dir) / "calibrations";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  files.insert(files.end(), f.calibrations.begin(), f.calibrations.end());
  for (const std::string& file : files) {
    if (auto s = crest::LoadCalibrationFile(file); !s.ok()) return std::string(s.message());
    Log(Level::kInfo, "calibration_loaded", {{"file", file}});
  }
  return "";
}

// Testing aid: the model backend slowed to a measuring backend's pace, so
// that cancellation, priorities and crash recovery can be exercised
// without a GPU. Results are unchanged.
class DelayedBackend final : public crest::Backend {
 public:
  DelayedBackend(std::unique_ptr<crest::Backend> inner, double delay_ms)
      : inner_(std::move(inner)), delay_ms_(delay_ms) {}
  std::string_view Name() const override { return inner_->Name(); }
  bool Measures() const override { return inner_->Measures(); }
  const crest::GpuSpec& Gpu() const override { return inner_->Gpu(); }
  absl::StatusOr<crest::GemmOutcome> Run(const crest::GemmShape& gemm) override {
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_ms_ * 1000)));
    return inner_->Run(gemm);
  }

 private:
  std::unique_ptr<crest::Backend> inner_;
  double delay_ms_;
};

// HOST:PORT with a numeric port, or unix:PATH.
bool IsAddress(const std::string& address) {
  if (address.starts_with("unix:")) return address.size() > 5;
  return crest::ParseHostPort(address, 0).has_value();
}

bool IsLoopback(const std::string& address) {
  return address.starts_with("unix:") || address.starts_with("127.") ||
         address.starts_with("localhost:") || address.starts_with("[::1]:");
}

void WriteAtomically(const std::string& path, int value) {
  std::ofstream(path + ".tmp") << value << "\n";
  std::error_code ec;
  std::filesystem::rename(path + ".tmp", path, ec);
}

// The server's credentials: TLS when a certificate is given, else plaintext.
// Returns an error message, or empty.
std::string Credentials(const Flags& f, std::shared_ptr<grpc::ServerCredentials>* out) {
  if (f.tls_cert.empty() != f.tls_key.empty()) return "--tls-cert and --tls-key go together";
  if (f.tls_cert.empty()) {
    if (!f.tls_client_ca.empty()) return "--tls-client-ca needs --tls-cert and --tls-key";
    *out = grpc::InsecureServerCredentials();
    return "";
  }
  const auto key = crest::ReadWholeFile(f.tls_key);
  if (!key) return "--tls-key: cannot read '" + f.tls_key + "'";
  const auto cert = crest::ReadWholeFile(f.tls_cert);
  if (!cert) return "--tls-cert: cannot read '" + f.tls_cert + "'";
  grpc::SslServerCredentialsOptions options(
      f.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!f.tls_client_ca.empty()) {
    const auto ca = crest::ReadWholeFile(f.tls_client_ca);
    if (!ca) return "--tls-client-ca: cannot read '" + f.tls_client_ca + "'";
    options.pem_root_certs = *ca;
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  pair.private_key = *key;
  pair.cert_chain = *cert;
  options.pem_key_cert_pairs.push_back(pair);
  *out = grpc::SslServerCredentials(options);
  return "";
}

// Where jobs run: the model always; each CUDA device when built with CUDA.
std::vector<crest::crestd::Lane> Lanes() {
  std::vector<crest::crestd::Lane> lanes = {{"model", "model", "", "", -1}};
#ifdef CREST_HAVE_CUDA
  auto devices = crest::measure::ProbeDevices();
  if (devices.ok()) {
    for (const auto& d : *devices) {
      lanes.push_back({"cuda:" + std::to_string(d.index), "cublaslt", d.device.uuid,
                       d.device.gpu_model, d.index});
    }
  } else {
    Log(Level::kInfo, "no_device", {{"message", std::string(devices.status().message())}});
  }
#endif
  return lanes;
}

absl::StatusOr<std::unique_ptr<crest::Backend>> MakeBackend(const crest::crestd::Lane& lane,
                                                            const crest::service::SweepSpec& spec,
                                                            double model_delay_ms) {
  auto backend = crest::service::MakeBackend({lane.backend, spec.gpu, lane.device, spec.measure});
  if (!backend.ok() || lane.backend != "model" || model_delay_ms <= 0) return backend;
  return std::make_unique<DelayedBackend>(*std::move(backend), model_delay_ms);
}

int Serve(const Flags& f) {
  if (!IsAddress(f.listen)) {
    std::cerr << "crestd: error: --listen '" << f.listen
              << "' is not HOST:PORT (port 0 picks a free one) or unix:PATH\n";
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (auto error = Credentials(f, &credentials); !error.empty()) {
    std::cerr << "crestd: error: " << error << "\n";
    return 2;
  }
  const bool tls = !f.tls_cert.empty();
  if (!IsLoopback(f.listen) && !tls) {
    if (!f.insecure) {
      std::cerr << "crestd: error: --listen " << f.listen
                << " is not a loopback address; serve it with TLS (--tls-cert, --tls-key) or "
                   "pass --insecure to serve plaintext\n";
      return 2;
    }
    Log(Level::kWarn, "insecure_listen",
        {{"address", f.listen}, {"reason", "non-loopback without TLS (--insecure)"}});
  }
  crest::crestd::Authorizer auth;
  if (!f.token_file.empty()) {
    auto tokens = crest::crestd::LoadTokens(f.token_file);
    if (!tokens.ok()) {
      std::cerr << "crestd: error: " << tokens.status().message() << "\n";
      return 2;
    }
    if (!tls && !IsLoopback(f.listen)) {
      std::cerr << "crestd: error: --token-file on a non-loopback address needs TLS: tokens "
                   "would cross the network in clear text\n";
      return 2;
    }
    auth = crest::crestd::Authorizer(std::move(*tokens), f.auth_reads);
  } else if (f.auth_reads) {
    std::cerr << "crestd: error: --auth-reads needs --token-file\n";
    return 2;
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"--max-job-gemms", f.max_job_gemms},
        {"--max-queued-per-client", f.max_queued_per_client},
        {"--max-streams", f.max_streams},
        {"--max-message-bytes", f.max_message_bytes}}) {
    if (value < 1) {
      std::cerr << "crestd: error: " << name << " must be at least 1 (got " << value << ")\n";
      return 2;
    }
  }

  if (auto error = LoadCalibrations(f); !error.empty()) {
    std::cerr << "crestd: error: " << error << "\n";
    return 2;
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

  std::unique_ptr<crest::crestd::Metrics> metrics = crest::crestd::Metrics::Disabled();
  if (!f.metrics_listen.empty()) {
    int metrics_port = 0;
    auto served = crest::crestd::Metrics::Serve(f.metrics_listen, &metrics_port);
    if (!served.ok()) {
      std::cerr << "crestd: error: " << served.status().message() << "\n";
      return absl::IsInvalidArgument(served.status()) ? 2 : 1;
    }
    metrics = std::move(*served);
    if (!f.metrics_port_file.empty()) WriteAtomically(f.metrics_port_file, metrics_port);
    Log(Level::kInfo, "metrics_listening", {{"port", std::to_string(metrics_port)}});
  }

  // Signals are taken by sigwait below, never by gRPC's or the runners' threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  crest::crestd::StorePool pool(db_path);
  crest::crestd::JobQueueOptions queue_options;
  queue_options.db_path = db_path;
  queue_options.lanes = Lanes();
  queue_options.max_gemms_per_job = f.max_job_gemms;
  queue_options.max_queued_per_client = f.max_queued_per_client;
  queue_options.host = host;
  queue_options.make_backend = [delay = f.model_gemm_delay_ms](const auto& lane, const auto& spec) {
    return MakeBackend(lane, spec, delay);
  };
  crest::crestd::Metrics& m = *metrics;
  queue_options.on_job_end = [&m](const crest::store::JobRecord& job) {
    m.JobEnded(std::string(crest::store::JobStateName(job.state)));
  };
  queue_options.on_result = [&m](const crest::crestd::Lane&, const crest::crestd::JobResult& r) {
    m.ResultWritten(r.measured);
  };
  queue_options.on_busy = [&m](const crest::crestd::Lane& lane, double seconds) {
    m.BackendBusy(lane.name, seconds);
  };
  crest::crestd::JobQueue queue(queue_options, pool);
  if (auto s = queue.Start(); !s.ok()) {
    std::cerr << "crestd: error: starting the job queue: " << s.message() << "\n";
    return 1;
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  crest::crestd::ServiceOptions service_options;
  service_options.db_path = db_path;
  service_options.state_dir = f.state_dir;
  service_options.max_streams = f.max_streams;
  crest::crestd::CrestService service(service_options, pool, queue, auth, *metrics);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(f.listen, credentials, &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(f.max_message_bytes);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (port == 0 && !f.listen.starts_with("unix:"))) {
    std::cerr << "crestd: error: cannot listen on " << f.listen << "\n";
    queue.Stop();
    return 1;
  }
  const std::string bound =
      f.listen.starts_with("unix:")
          ? f.listen
          : f.listen.substr(0, f.listen.rfind(':') + 1) + std::to_string(port);
  if (!f.port_file.empty()) WriteAtomically(f.port_file, port);
  Log(Level::kInfo, "listening",
      {{"address", bound},
       {"db", db_path},
       {"tls", tls ? (f.tls_client_ca.empty() ? "server" : "mutual") : "off"},
       {"tokens", auth.enabled() ? (f.auth_reads ? "all calls" : "mutating calls") : "off"},
       {"lanes", std::to_string(queue_options.lanes.size())},
       {"default_backend", queue.DefaultBackend()}});

  // The queue gauges, refreshed while serving.
  std::atomic<bool> serving{true};
  std::thread gauges([&] {
    while (serving.load()) {
      metrics->SetQueue(queue.QueuedCount(), queue.RunningCount());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  Log(Level::kInfo, "shutting_down", {{"signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"}});
  server->GetHealthCheckService()->SetServingStatus(false);
  // No new jobs; the running GEMM finishes, its job stays queued for the
  // next start; every job stream ends with UNAVAILABLE.
  queue.Stop();
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(f.shutdown_grace_s * 1000));
  server->Shutdown(deadline);
  server->Wait();
  serving = false;
  gauges.join();
  Log(Level::kInfo, "stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "crestd: the Crest daemon. Serves d_ff rankings, GEMM lookups, predictions, node "
      "information and database snapshots over gRPC (package crest.v1, with grpc.health.v1 and "
      "reflection), and runs sweep jobs from a persistent queue: one runner per GPU, one for "
      "the analytic model."};
  Flags f;
  app.set_config("--config", "", "config file: one 'flag = value' per line (TOML/INI)");
  app.add_option("--listen", f.listen, "HOST:PORT or unix:PATH (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--state-dir", f.state_dir, "directory of the database (crest.db)")
      ->capture_default_str();
  app.add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--port-file", f.port_file, "write the port listened on to this file");
  app.add_flag("--insecure", f.insecure,
               "allow a non-loopback --listen without TLS (logs a warning)");
  app.add_option("--tls-cert", f.tls_cert, "server certificate chain (PEM); turns TLS on");
  app.add_option("--tls-key", f.tls_key, "server private key (PEM)");
  app.add_option("--tls-client-ca", f.tls_client_ca,
                 "CA (PEM) that client certificates must chain to: mutual TLS");
  app.add_option("--token-file", f.token_file,
                 "bearer tokens, one 'NAME TOKEN' per line; Sweep, SubmitJob and CancelJob "
                 "then need one");
  app.add_flag("--auth-reads", f.auth_reads, "every call, not only mutating ones, needs a token");
  app.add_option("--max-message-bytes", f.max_message_bytes, "largest request accepted [bytes]")
      ->capture_default_str();
  app.add_option("--max-job-gemms", f.max_job_gemms, "largest plan one job may hold [GEMMs]")
      ->capture_default_str();
  app.add_option("--max-queued-per-client", f.max_queued_per_client,
                 "queued jobs one client (token or address) may have")
      ->capture_default_str();
  app.add_option("--max-streams", f.max_streams,
                 "Sweep, WatchJob and ExportResults streams open at once")
      ->capture_default_str();
  app.add_option("--metrics-listen", f.metrics_listen,
                 "serve Prometheus metrics at http://HOST:PORT/metrics (off when empty)");
  app.add_option("--metrics-port-file", f.metrics_port_file, "write the metrics port to this file");
  app.add_option("--calibration", f.calibrations,
                 "load a predictor calibration (crest calibrate --out FILE); repeatable; "
                 "<state-dir>/calibrations/*.json load first");
  app.add_option("--shutdown-grace", f.shutdown_grace_s,
                 "seconds in-flight calls get after SIGTERM/SIGINT")
      ->capture_default_str();
  app.add_option("--model-gemm-delay-ms", f.model_gemm_delay_ms,
                 "testing aid: sleep this long before each model-backend GEMM (results unchanged)")
      ->group("Testing");
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
