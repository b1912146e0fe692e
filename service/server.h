// crestd as a library: a Server runs the whole daemon in this process — the
// gRPC service, the job queue with one runner per lane, metrics — and stops
// it cleanly. `crestd` (main.cc) is flag parsing and signals around it;
// tests start one in-process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/common/env.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/backend.h"
#include "job_queue.h"

namespace crest::service {

// Makes the backend a job runs on in `lane`.
using BackendMaker = std::function<absl::StatusOr<std::unique_ptr<tuner::Backend>>(
    const Lane& lane, const sweep::SweepSpec& spec)>;

// Everything a crestd is told. The flags of server_flags.h fill it.
struct ServerConfig {
  std::string listen = "127.0.0.1:50051";  // HOST:PORT (port 0: any free) or unix:PATH
  std::string state_dir = "./var";         // crest.db, snapshots, calibrations/
  std::string port_file;                   // the bound port is written here
  bool insecure = false;                   // plaintext off loopback
  int max_message_bytes = 4 << 20;
  double shutdown_grace_s = 10;
  std::string tls_cert, tls_key, tls_client_ca;
  std::string token_file;
  bool auth_reads = false;
  bool public_export = false;  // with tokens: ExportResults without one
  int64_t max_job_gemms = 200'000;
  int max_queued_per_client = 32;
  int max_streams = 64;                 // streams open at once, all callers
  int max_anonymous_streams = 16;       // of which, with tokens on, callers without one
  double stream_write_timeout_s = 30;   // a stream whose reader takes longer per write ends
  int max_streams_per_caller = 8;       // streams one token or address may hold (operators: any)
  double stream_idle_timeout_s = 3600;  // a stream with nothing to send this long ends; 0: never
  // Costly answers (QueryDff, TimeGemms, Compare) not in the cache:
  // computed on their own threads, callers in turn, so many per caller
  // waiting or running, so many waiting in all (answer_pool.h).
  int answer_threads = 2;
  int answers_per_caller = 64;
  int max_waiting_answers = 256;
  int64_t max_answer_bytes = 4 << 20;  // a larger answer is refused, naming the limit
  int64_t max_query_gemms = 50'000;    // GEMMs one QueryDff may rank
  double max_job_seconds = 86'400;     // a job's wall-time budget; 0: none
  bool check_on_start = true;          // PRAGMA quick_check before serving; a 0-byte file refused
  int64_t max_list_bytes = 1 << 20;    // a ListJobs page's size at most
  int answer_cache = 4096;             // answers kept by results generation; 0: none
  int64_t max_db_bytes = 0;            // the database's cap (0: the disk's); jobs pause at it
  double full_retry_s = 30;            // a paused job's lane tries again after this long
  std::string metrics_listen;          // empty: no metrics endpoint
  std::string metrics_port_file;
  // With metrics: seconds between fleet checks (crest_fleet_*; 0: none).
  double fleet_check_s = 600;
  std::vector<std::string> calibrations;  // --calibration files, after <state-dir>/calibrations/

  // What is injected. Empty lanes: the model plus every CUDA device found.
  // Empty make_backend: sweep::MakeBackend. Null env: DefaultEnv().
  std::vector<Lane> lanes;
  BackendMaker make_backend;
  Env* env = nullptr;
};

class Server final {
 public:
  // Checks the config, locks the state directory (FailedPrecondition naming
  // the holder when another crestd has it), loads calibrations, creates or
  // upgrades the database, starts metrics, the job queue and the gRPC
  // server, and writes the port files. InvalidArgument for a config that cannot work (the
  // message names the flag); another code when the machine refused (a
  // database that cannot be opened, a port that cannot be bound).
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerConfig config);
  ~Server();  // Shutdown()s

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The port listened on (0 for unix:PATH), and HOST:PORT or unix:PATH.
  int port() const;
  const std::string& address() const;

  // Stops serving: health turns NOT_SERVING, the job queue stops between
  // GEMMs (running jobs stay queued for the next start), streams end with
  // UNAVAILABLE, and calls in flight get the shutdown grace. Idempotent.
  void Shutdown();

  struct Parts;  // internal

 private:
  explicit Server(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace crest::service
