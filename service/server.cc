#include "server.h"

#include <arpa/inet.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <malloc.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "auth.h"
#include "crest/common/host_port.h"
#include "crest/common/str_cat.h"
#include "crest/measure/cuda_backend.h"
#include "crest/store/records.h"
#include "crest/sweep/backend_factory.h"
#include "crest/tuner/calibration.h"
#include "crest_service.h"
#include "fleet_gauges.h"
#include "log.h"
#include "metrics.h"
#include "node_database.h"
#include "queued_calls.h"
#include "server_paths.h"
#include "state_dir_lock.h"
#include "store_pool.h"

namespace crest::service {

// Request metadata (headers, the token included) at most: 8 KiB, gRPC's
// suggested default, set explicitly (a token is at most 4 KiB: auth.h).
constexpr int kMaxMetadataBytes = 8 << 10;

struct Server::Parts {
  ServerConfig config;
  Env* env = nullptr;
  StateDirLock lock;
  std::string db_path;
  // Declared in the order they start; destroyed in reverse.
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<StorePool> pool;
  Authorizer auth;
  std::unique_ptr<JobQueue> queue;
  std::unique_ptr<CrestService> service;
  // Methods no service registers (grpc.health.v1's Check: queued_calls.h);
  // SERVING until Shutdown.
  std::unique_ptr<grpc::AsyncGenericService> generic;
  std::atomic<bool> health_serving{true};
  // The queue every call is served from: it outlives the server.
  std::unique_ptr<CallQueue> calls;
  std::unique_ptr<grpc::Server> grpc;
  int port = 0;
  std::string address;
  size_t lanes = 0;
  std::atomic<bool> serving{false};
  std::thread gauges;
  std::unique_ptr<FleetGauges> fleet;  // with metrics and --fleet-check-interval
  std::mutex shutdown_mutex;
  bool shut_down = false;
};

namespace {

// HOST:PORT with a numeric port, or unix:PATH.
bool IsAddress(const std::string& address) {
  if (address.starts_with("unix:")) return address.size() > 5;
  return ParseHostPort(address, 0).has_value();
}

// By address, not by spelling: "127.evil.example:1" is not loopback.
bool IsLoopback(const std::string& address) {
  if (address.starts_with("unix:")) return true;
  const auto parsed = ParseHostPort(address, 0);
  if (!parsed) return false;
  std::string host = parsed->host;
  if (host == "localhost") return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool UsesTls(const ServerConfig& c) { return !c.tls_cert.empty(); }

// The sizes, counts and budgets: InvalidArgument naming the flag.
absl::Status CheckBudgets(const ServerConfig& c) {
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"--max-job-gemms", c.max_job_gemms},
        {"--max-queued-per-client", c.max_queued_per_client},
        {"--max-streams", c.max_streams},
        {"--max-list-bytes", c.max_list_bytes},
        {"--max-message-bytes", c.max_message_bytes},
        {"--max-streams-per-caller", c.max_streams_per_caller},
        {"--answer-threads", c.answer_threads},
        {"--answers-per-caller", c.answers_per_caller},
        {"--max-waiting-answers", c.max_waiting_answers},
        {"--max-answer-bytes", c.max_answer_bytes},
        {"--max-query-gemms", c.max_query_gemms}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(StrCat(name, " must be at least 1 (got ", value, ")"));
    }
  }
  if (c.answer_threads > 256) {
    return absl::InvalidArgumentError(
        StrCat("--answer-threads must be at most 256 (got ", c.answer_threads, ")"));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"--stream-idle-timeout", c.stream_idle_timeout_s},
        {"--max-job-seconds", c.max_job_seconds}}) {
    if (!(value >= 0 && value <= 86400.0 * 365)) {
      return absl::InvalidArgumentError(
          StrCat(name, " must be between 0 (none) and 31536000 seconds (got ", value, ")"));
    }
  }
  return absl::OkStatus();
}

// What can be told from the config alone; InvalidArgument naming the flag.
absl::Status CheckConfig(const ServerConfig& c) {
  if (!IsAddress(c.listen)) {
    return absl::InvalidArgumentError(StrCat(
        "--listen '", c.listen, "' is not HOST:PORT (port 0 picks a free one) or unix:PATH"));
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!UsesTls(c) && !c.tls_client_ca.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (!IsLoopback(c.listen) && !UsesTls(c) && !c.insecure) {
    return absl::InvalidArgumentError(
        StrCat("--listen ", c.listen,
               " is not a loopback address; serve it with TLS (--tls-cert, --tls-key) or pass "
               "--insecure to serve plaintext"));
  }
  if (!c.token_file.empty() && !UsesTls(c) && !IsLoopback(c.listen)) {
    return absl::InvalidArgumentError(
        "--token-file on a non-loopback address needs TLS: tokens would cross the network in "
        "clear text");
  }
  if (c.token_file.empty() && c.auth_reads) {
    return absl::InvalidArgumentError("--auth-reads needs --token-file");
  }
  if (c.token_file.empty() && c.public_export) {
    return absl::InvalidArgumentError(
        "--public-export needs --token-file (without tokens every export is public)");
  }
  if (c.max_anonymous_streams < 0) {
    return absl::InvalidArgumentError(
        StrCat("--max-anonymous-streams must be at least 0 (got ", c.max_anonymous_streams, ")"));
  }
  if (!(c.stream_write_timeout_s > 0 && c.stream_write_timeout_s <= 86400)) {
    return absl::InvalidArgumentError(
        StrCat("--stream-write-timeout must be between 0 and 86400 seconds (got ",
               c.stream_write_timeout_s, ")"));
  }
  if (c.max_db_bytes != 0 && c.max_db_bytes < 1 << 20) {
    return absl::InvalidArgumentError(
        StrCat("--max-db-bytes must be 0 (no cap) or at least 1048576 (got ", c.max_db_bytes, ")"));
  }
  if (!(c.fleet_check_s >= 0 && c.fleet_check_s <= 86400 * 7)) {
    return absl::InvalidArgumentError(
        StrCat("--fleet-check-interval must be between 0 (off) and 604800 seconds (got ",
               c.fleet_check_s, ")"));
  }
  if (!(c.full_retry_s > 0 && c.full_retry_s <= 86400)) {
    return absl::InvalidArgumentError(
        StrCat("--full-retry must be between 0 and 86400 seconds (got ", c.full_retry_s, ")"));
  }
  if (c.answer_cache < 0 || c.answer_cache > 1'000'000) {
    return absl::InvalidArgumentError(
        StrCat("--answer-cache must be between 0 (off) and 1000000 (got ", c.answer_cache, ")"));
  }
  return CheckBudgets(c);
}

// TLS when a certificate is given, else plaintext. InvalidArgument naming
// the flag whose file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> CredentialsFor(const ServerConfig& c,
                                                                        const Env& env) {
  if (!UsesTls(c)) return grpc::InsecureServerCredentials();
  auto read = [&env](const char* flag, const std::string& path) -> absl::StatusOr<std::string> {
    auto text = env.ReadFile(path);
    if (!text.ok()) return absl::InvalidArgumentError(StrCat(flag, ": ", text.status().message()));
    return text;
  };
  auto key = read("--tls-key", c.tls_key);
  if (!key.ok()) return key.status();
  auto cert = read("--tls-cert", c.tls_cert);
  if (!cert.ok()) return cert.status();
  grpc::SslServerCredentialsOptions options(
      c.tls_client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!c.tls_client_ca.empty()) {
    auto ca = read("--tls-client-ca", c.tls_client_ca);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  pair.private_key = *std::move(key);
  pair.cert_chain = *std::move(cert);
  options.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<Authorizer> AuthorizerFor(const ServerConfig& c, const Env& env) {
  if (c.token_file.empty()) return Authorizer();
  auto tokens = LoadTokens(c.token_file, env);
  if (!tokens.ok()) return tokens.status();
  return Authorizer(*std::move(tokens), c.auth_reads, c.public_export);
}

// The predictor calibrations this node answers with: the shipped ones, then
// <state-dir>/calibrations/*.json (a node's own refits), then --calibration
// files; a later one replaces an earlier one for the same GPU and dtype.
absl::Status LoadCalibrations(const ServerConfig& c, const Env& env) {
  auto files =
      env.ListFiles((std::filesystem::path(c.state_dir) / "calibrations").string(), ".json");
  if (!files.ok() && !absl::IsNotFound(files.status())) return files.status();
  std::vector<std::string> all = files.ok() ? *std::move(files) : std::vector<std::string>{};
  all.insert(all.end(), c.calibrations.begin(), c.calibrations.end());
  for (const std::string& file : all) {
    if (auto s = tuner::LoadCalibrationFile(file); !s.ok())
      return absl::InvalidArgumentError(s.message());
    Log(Level::kInfo, "calibration_loaded", {{"file", file}});
  }
  return absl::OkStatus();
}

// Creates and locks the state directory, and creates or upgrades the
// database once, as the writer would (checking it when asked); the
// database's path.
absl::StatusOr<std::string> PrepareDatabase(Server::Parts& p) {
  const ServerConfig& c = p.config;
  if (auto s = p.env->CreateDirectories(c.state_dir); !s.ok()) return s;
  auto lock = StateDirLock::Take(c.state_dir, p.env->HostName());
  if (!lock.ok()) return lock.status();
  p.lock = *std::move(lock);
  std::string path = (std::filesystem::path(c.state_dir) / "crest.db").string();
  HideServerPath(path, "the node's database");
  HideServerPath(c.state_dir, "the node's state directory");
  std::error_code size_error;
  if (c.check_on_start && std::filesystem::file_size(path, size_error) == 0 && !size_error) {
    // SQLite would make a new database of it, hiding whatever emptied it.
    Log(Level::kError, "database_empty", {{"db", path}});
    return absl::DataLossError(
        StrCat(path,
               " is empty (0 bytes): restore it from a snapshot, or remove it to start a "
               "new database (--no-check-on-start skips this check)"));
  }
  if (auto s = OpenNodeDatabase(path, p.env, c.check_on_start); !s.ok()) return s;
  return path;
}

absl::Status WritePortFile(Env& env, const std::string& path, int port) {
  if (path.empty()) return absl::OkStatus();
  return env.WriteFileAtomically(path, StrCat(port, "\n"));
}

absl::StatusOr<std::unique_ptr<Metrics>> StartMetrics(const ServerConfig& c, Env& env) {
  if (c.metrics_listen.empty()) return Metrics::Disabled();
  int port = 0;
  auto metrics = Metrics::Serve(c.metrics_listen, &port);
  if (!metrics.ok()) return metrics.status();
  if (auto s = WritePortFile(env, c.metrics_port_file, port); !s.ok()) return s;
  Log(Level::kInfo, "metrics_listening", {{"port", std::to_string(port)}});
  return metrics;
}

// Where jobs run: the model always; each CUDA device when built with CUDA
// (which loads the engine, cuBLASLt with it, only when the driver sees one).
std::vector<Lane> ProbeLanes() {
  std::vector<Lane> lanes = {{"model", "model", "", "", -1}};
  if (!measure::CublasLtBackendBuilt()) return lanes;
  auto devices = measure::ProbeDevices();
  if (devices.ok()) {
    for (const auto& d : *devices) {
      lanes.push_back({"cuda:" + std::to_string(d.index), "cublaslt", d.device.uuid,
                       d.device.gpu_model, d.index});
    }
  } else {
    Log(Level::kInfo, "no_device", {{"message", std::string(devices.status().message())}});
  }
  return lanes;
}

JobQueueOptions QueueOptions(const Server::Parts& p) {
  const ServerConfig& c = p.config;
  JobQueueOptions o;
  o.db_path = p.db_path;
  o.lanes = c.lanes.empty() ? ProbeLanes() : c.lanes;
  o.max_gemms_per_job = c.max_job_gemms;
  o.max_queued_per_client = c.max_queued_per_client;
  o.max_db_pages = MaxDbPages(c.max_db_bytes);
  o.full_retry_s = c.full_retry_s;
  o.max_job_seconds = c.max_job_seconds;
  o.host = p.env->HostName();
  o.env = p.env;
  o.make_backend = c.make_backend ? c.make_backend : [](const Lane& lane, const auto& spec) {
    return sweep::MakeBackend({lane.backend, spec.gpu, lane.device, spec.measure, {}});
  };
  Metrics& m = *p.metrics;
  o.on_job_end = [&m](const store::JobRecord& job) {
    m.JobEnded(std::string(store::JobStateName(job.state)));
  };
  o.on_result = [&m](const Lane&, const JobResult& r) { m.ResultWritten(r.source); };
  o.on_busy = [&m](const Lane& lane, double seconds) { m.BackendBusy(lane.name, seconds); };
  return o;
}

// Builds and starts the gRPC server on the service; UNAVAILABLE when the
// address cannot be bound.
absl::Status StartGrpc(Server::Parts& p,
                       const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  // gRPC's default health service is a callback service, which would start
  // gRPC's callback threads polling beside crestd's own (queued_calls.h).
  grpc::EnableDefaultHealthCheckService(false);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(p.config.listen, credentials, &p.port);
  builder.RegisterService(p.service.get());
  p.generic = std::make_unique<grpc::AsyncGenericService>();
  builder.RegisterAsyncGenericService(p.generic.get());
  p.calls = std::make_unique<CallQueue>(builder.AddCompletionQueue());
  builder.SetMaxReceiveMessageSize(p.config.max_message_bytes);
  // Headers are refused past this before any of crestd's code reads them
  // (Debian's gRPC 1.51 spends seconds of CPU on a header of megabytes).
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxMetadataBytes);
  p.grpc = builder.BuildAndStart();
  if (p.grpc != nullptr) {
    p.service->Serve(*p.calls);
    GenericCall::AskNext(*p.calls, *p.generic, p.health_serving);
    p.calls->Start();
  }
  const bool unix_socket = p.config.listen.starts_with("unix:");
  if (p.grpc == nullptr || (p.port == 0 && !unix_socket)) {
    return absl::UnavailableError(StrCat(
        "cannot listen on ", p.config.listen,
        UsesTls(p.config)
            ? ": the address may be in use, or --tls-key is not the private key of --tls-cert "
              "(both PEM; `openssl x509 -noout -pubkey -in CERT` and `openssl pkey -pubout -in "
              "KEY` must print the same key)"
            : ": the address may be in use or not this machine's"));
  }
  p.address = unix_socket ? p.config.listen
                          : p.config.listen.substr(0, p.config.listen.rfind(':') + 1) +
                                std::to_string(p.port);
  return absl::OkStatus();
}

void LogListening(const Server::Parts& p) {
  const ServerConfig& c = p.config;
  Log(Level::kInfo, "listening",
      {{"address", p.address},
       {"db", p.db_path},
       {"tls", UsesTls(c) ? (c.tls_client_ca.empty() ? "server" : "mutual") : "off"},
       {"tokens", p.auth.enabled() ? (c.auth_reads ? "all calls" : "mutating calls") : "off"},
       {"export", !p.auth.enabled() || c.public_export ? "public" : "token"},
       {"lanes", std::to_string(p.lanes)},
       {"default_backend", p.queue->DefaultBackend()}});
}

// The queue gauges, refreshed while serving.
// The queue gauges every 250 ms; every 10 s, the heap's free memory goes
// back to the system: glibc keeps what many threads freed (requests of up to
// --max-message-bytes each) in per-thread arenas. In the 1,000,000-request
// soak this took the heap's RSS at the end from 325 to 263 MB.
void StartGauges(Server::Parts& p) {
  p.serving = true;
  p.gauges = std::thread([&p] {
    for (int64_t tick = 1; p.serving.load(); ++tick) {
      p.metrics->SetQueue(p.queue->QueuedCount(), p.queue->RunningCount());
      if (tick % 40 == 0) {
        const struct mallinfo2 heap = mallinfo2();
        p.metrics->SetHeap(static_cast<double>(heap.uordblks + heap.hblkhd),
                           static_cast<double>(heap.fordblks));
        malloc_trim(0);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

// Everything after the config is known good: the parts, in order.
absl::Status StartParts(Server::Parts& p,
                        const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  Env& env = *p.env;
  auto db_path = PrepareDatabase(p);
  if (!db_path.ok()) return db_path.status();
  p.db_path = *std::move(db_path);
  auto metrics = StartMetrics(p.config, env);
  if (!metrics.ok()) return metrics.status();
  p.metrics = *std::move(metrics);
  p.pool = std::make_unique<StorePool>(p.db_path);
  JobQueueOptions queue = QueueOptions(p);
  p.lanes = queue.lanes.size();
  p.queue = std::make_unique<JobQueue>(std::move(queue), *p.pool);
  if (auto s = p.queue->Start(); !s.ok()) {
    return absl::Status(s.code(), StrCat("starting the job queue: ", s.message()));
  }
  ServiceOptions service;
  service.db_path = p.db_path;
  service.state_dir = p.config.state_dir;
  service.max_streams = p.config.max_streams;
  // Never more than all streams (a small --max-streams takes the default down).
  service.max_anonymous_streams = std::min(p.config.max_anonymous_streams, p.config.max_streams);
  service.stream_write_timeout_s = p.config.stream_write_timeout_s;
  service.max_streams_per_caller = p.config.max_streams_per_caller;
  service.stream_idle_timeout_s = p.config.stream_idle_timeout_s;
  service.answers = {p.config.answer_threads, p.config.max_waiting_answers,
                     p.config.answers_per_caller};
  service.max_answer_bytes = static_cast<size_t>(p.config.max_answer_bytes);
  service.max_query_gemms = p.config.max_query_gemms;
  service.max_list_bytes = static_cast<size_t>(p.config.max_list_bytes);
  service.cache_entries = static_cast<size_t>(p.config.answer_cache);
  service.host = env.HostName();
  service.env = &env;
  p.service = std::make_unique<CrestService>(service, *p.pool, *p.queue, p.auth, *p.metrics);
  if (auto s = StartGrpc(p, credentials); !s.ok()) return s;
  if (auto s = WritePortFile(env, p.config.port_file, p.port); !s.ok()) return s;
  StartGauges(p);
  if (!p.config.metrics_listen.empty() && p.config.fleet_check_s > 0) {
    p.fleet = std::make_unique<FleetGauges>(*p.pool, *p.metrics, p.config.fleet_check_s);
  }
  LogListening(p);
  return absl::OkStatus();
}

// Protobuf's own complaints (e.g. a request string that is not UTF-8, which
// hostile clients send by the thousand) go to crestd's log at debug level,
// not to stderr line by line.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  Log(level >= google::protobuf::LOGLEVEL_FATAL ? Level::kError : Level::kDebug, "protobuf",
      {{"message", message}, {"at", StrCat(file, ":", line)}});
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerConfig config) {
  google::protobuf::SetLogHandler(&ProtobufLog);
  auto parts = std::make_unique<Parts>();
  parts->env = config.env != nullptr ? config.env : &DefaultEnv();
  parts->config = std::move(config);
  const ServerConfig& c = parts->config;
  if (auto s = CheckConfig(c); !s.ok()) return s;
  if (!IsLoopback(c.listen) && !UsesTls(c)) {
    Log(Level::kWarn, "insecure_listen",
        {{"address", c.listen}, {"reason", "non-loopback without TLS (--insecure)"}});
  }
  auto credentials = CredentialsFor(c, *parts->env);
  if (!credentials.ok()) return credentials.status();
  auto auth = AuthorizerFor(c, *parts->env);
  if (!auth.ok()) return auth.status();
  parts->auth = *std::move(auth);
  if (auto s = LoadCalibrations(c, *parts->env); !s.ok()) return s;
  // Whatever started is stopped by the Server's destructor on failure.
  std::unique_ptr<Server> server(new Server(std::move(parts)));
  if (auto s = StartParts(*server->parts_, *credentials); !s.ok()) return s;
  return server;
}

Server::Server(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Server::~Server() { Shutdown(); }

int Server::port() const { return parts_->port; }
const std::string& Server::address() const { return parts_->address; }

void Server::Shutdown() {
  Parts& p = *parts_;
  std::lock_guard<std::mutex> lock(p.shutdown_mutex);
  if (p.shut_down) return;
  p.shut_down = true;
  p.health_serving = false;
  // No new jobs; the running GEMM finishes, its job stays queued for the
  // next start; every job stream ends with UNAVAILABLE.
  if (p.queue != nullptr) p.queue->Stop();
  if (p.grpc != nullptr) {
    const auto grace =
        std::chrono::milliseconds(static_cast<int64_t>(p.config.shutdown_grace_s * 1000));
    p.grpc->Shutdown(std::chrono::system_clock::now() + grace);
  }
  // Calls still waiting for the answer pool finish UNAVAILABLE; then every
  // call has finished and the queue may stop.
  if (p.service != nullptr) p.service->StopAnswers();
  if (p.calls != nullptr) p.calls->Stop(std::chrono::seconds(30));
  if (p.grpc != nullptr) p.grpc->Wait();
  p.serving = false;
  if (p.gauges.joinable()) p.gauges.join();
  p.fleet.reset();
}

}  // namespace crest::service
