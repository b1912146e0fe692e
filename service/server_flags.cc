#include "server_flags.h"

namespace crest::service {

using cmdline::AddFlag;
using cmdline::AddOption;

void AddDaemonFlags(CLI::App& app, DaemonFlags& flags) {
  ServerConfig& c = flags.server;
  cmdline::AddConfigFile(app, "--config", "config file: one 'flag = value' per line (TOML/INI)");
  AddOption(app, "--listen", c.listen, "HOST:PORT or unix:PATH (port 0 picks a free port)")
      .ShowDefault();
  AddOption(app, "--state-dir", c.state_dir, "directory of the database (crest.db)").ShowDefault();
  AddOption(app, "--log-level", flags.log_level, "debug, info, warn or error").ShowDefault();
  AddOption(app, "--port-file", c.port_file, "write the port listened on to this file");
  AddFlag(app, "--insecure", c.insecure,
          "allow a non-loopback --listen without TLS (logs a warning)");
  AddOption(app, "--tls-cert", c.tls_cert, "server certificate chain (PEM); turns TLS on");
  AddOption(app, "--tls-key", c.tls_key, "server private key (PEM)");
  AddOption(app, "--tls-client-ca", c.tls_client_ca,
            "CA (PEM) that client certificates must chain to: mutual TLS");
  AddOption(app, "--token-file", c.token_file,
            "bearer tokens, one 'NAME TOKEN' or 'NAME TOKEN operator' per line; Sweep, "
            "SubmitJob, CancelJob and ExportResults then need one, and a client cancels "
            "only its own jobs unless its token is an operator's");
  AddFlag(app, "--auth-reads", c.auth_reads, "every call, not only mutating ones, needs a token");
  AddFlag(app, "--public-export", c.public_export,
          "with --token-file, ExportResults needs no token (an export holds host names, "
          "GPU UUIDs and every spec)");
  AddOption(app, "--max-message-bytes", c.max_message_bytes, "largest request accepted [bytes]")
      .ShowDefault();
  AddOption(app, "--max-job-gemms", c.max_job_gemms, "largest plan one job may hold [GEMMs]")
      .ShowDefault();
  AddOption(app, "--max-queued-per-client", c.max_queued_per_client,
            "queued jobs one client (token or address) may have")
      .ShowDefault();
  AddOption(app, "--max-streams", c.max_streams,
            "Sweep, WatchJob and ExportResults streams open at once")
      .ShowDefault();
  AddOption(app, "--max-anonymous-streams", c.max_anonymous_streams,
            "with --token-file, of those streams, how many callers without a token may hold")
      .ShowDefault();
  AddOption(app, "--stream-write-timeout", c.stream_write_timeout_s,
            "seconds a stream's reader may take to accept one message before the stream "
            "ends (a reader that stops reading frees its slot)")
      .ShowDefault();
  AddOption(app, "--max-streams-per-caller", c.max_streams_per_caller,
            "streams one caller (token, or address without one) may hold; operator tokens "
            "are not counted, and with tokens the last quarter of --max-streams (at most "
            "4) is theirs")
      .ShowDefault();
  AddOption(app, "--stream-idle-timeout", c.stream_idle_timeout_s,
            "seconds a stream may have nothing to send before it ends and frees its slot "
            "(the client watches again; 0: never)")
      .ShowDefault();
  AddOption(app, "--answer-threads", c.answer_threads,
            "threads computing costly answers (QueryDff, TimeGemms, Compare) not in the "
            "cache, apart from the one thread serving calls; callers take turns")
      .ShowDefault();
  AddOption(app, "--answers-per-caller", c.answers_per_caller,
            "costly answers one caller (token or address) may have waiting or being "
            "computed; more are refused RESOURCE_EXHAUSTED")
      .ShowDefault();
  AddOption(app, "--max-waiting-answers", c.max_waiting_answers,
            "costly answers waiting for a thread, all callers")
      .ShowDefault();
  AddOption(app, "--max-answer-bytes", c.max_answer_bytes,
            "largest answer sent [bytes]; a larger one is refused, saying how to ask for "
            "less")
      .ShowDefault();
  AddOption(app, "--max-query-gemms", c.max_query_gemms,
            "GEMMs one QueryDff may rank (candidates of the window × GEMMs of each)")
      .ShowDefault();
  AddOption(app, "--max-job-seconds", c.max_job_seconds,
            "a job's wall-time budget: past it the job fails between GEMMs, its results "
            "kept (0: none)")
      .ShowDefault();
  AddFlag(app, "--check-on-start,!--no-check-on-start", c.check_on_start,
          "run SQLite's quick check on the database before serving (the default); a "
          "corrupt or empty (0-byte) one stops crestd with exit 1");
  AddOption(app, "--max-list-bytes", c.max_list_bytes,
            "a ListJobs page ends at this size (or at its limit of jobs); the answer says "
            "where the next page starts")
      .ShowDefault();
  AddOption(app, "--answer-cache", c.answer_cache,
            "QueryDff, LookupGemm and Predict answers kept in memory until a write changes "
            "the results (64 MiB at most); 0 turns the cache off")
      .ShowDefault();
  AddOption(app, "--max-db-bytes", c.max_db_bytes,
            "cap on the database file [bytes, >= 1048576; 0: none]: at the cap, or on a full "
            "disk, a job pauses and is tried again every --full-retry seconds")
      .ShowDefault();
  AddOption(app, "--full-retry", c.full_retry_s,
            "seconds a job paused by a full disk or --max-db-bytes waits before trying again")
      .ShowDefault();
  AddOption(app, "--metrics-listen", c.metrics_listen,
            "serve Prometheus metrics at http://HOST:PORT/metrics (off when empty)");
  AddOption(app, "--metrics-port-file", c.metrics_port_file, "write the metrics port to this file");
  AddOption(app, "--fleet-check-interval", c.fleet_check_s,
            "with --metrics-listen: seconds between checks of the database's devices "
            "against the fleet median of their GPU model (crest_fleet_device_*; 0: none)")
      .ShowDefault();
  AddOption(app, "--calibration", c.calibrations,
            "load a predictor calibration (crest calibrate --out FILE); repeatable; "
            "<state-dir>/calibrations/*.json load first");
  AddOption(app, "--shutdown-grace", c.shutdown_grace_s,
            "seconds in-flight calls get after SIGTERM/SIGINT")
      .ShowDefault();
}

}  // namespace crest::service
