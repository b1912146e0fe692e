#include "server_flags.h"

namespace crest::service {

void AddDaemonFlags(CLI::App& app, DaemonFlags& flags) {
  ServerConfig& c = flags.server;
  app.set_config("--config", "", "config file: one 'flag = value' per line (TOML/INI)");
  app.add_option("--listen", c.listen, "HOST:PORT or unix:PATH (port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--state-dir", c.state_dir, "directory of the database (crest.db)")
      ->capture_default_str();
  app.add_option("--log-level", flags.log_level, "debug, info, warn or error")
      ->capture_default_str();
  app.add_option("--port-file", c.port_file, "write the port listened on to this file");
  app.add_flag("--insecure", c.insecure,
               "allow a non-loopback --listen without TLS (logs a warning)");
  app.add_option("--tls-cert", c.tls_cert, "server certificate chain (PEM); turns TLS on");
  app.add_option("--tls-key", c.tls_key, "server private key (PEM)");
  app.add_option("--tls-client-ca", c.tls_client_ca,
                 "CA (PEM) that client certificates must chain to: mutual TLS");
  app.add_option("--token-file", c.token_file,
                 "bearer tokens, one 'NAME TOKEN' or 'NAME TOKEN operator' per line; Sweep, "
                 "SubmitJob, CancelJob and ExportResults then need one, and a client cancels "
                 "only its own jobs unless its token is an operator's");
  app.add_flag("--auth-reads", c.auth_reads, "every call, not only mutating ones, needs a token");
  app.add_flag("--public-export", c.public_export,
               "with --token-file, ExportResults needs no token (an export holds host names, "
               "GPU UUIDs and every spec)");
  app.add_option("--max-message-bytes", c.max_message_bytes, "largest request accepted [bytes]")
      ->capture_default_str();
  app.add_option("--max-job-gemms", c.max_job_gemms, "largest plan one job may hold [GEMMs]")
      ->capture_default_str();
  app.add_option("--max-queued-per-client", c.max_queued_per_client,
                 "queued jobs one client (token or address) may have")
      ->capture_default_str();
  app.add_option("--max-streams", c.max_streams,
                 "Sweep, WatchJob and ExportResults streams open at once")
      ->capture_default_str();
  app.add_option("--max-anonymous-streams", c.max_anonymous_streams,
                 "with --token-file, of those streams, how many callers without a token may hold")
      ->capture_default_str();
  app.add_option("--stream-write-timeout", c.stream_write_timeout_s,
                 "seconds a stream's reader may take to accept one message before the stream "
                 "ends (a reader that stops reading frees its slot)")
      ->capture_default_str();
  app.add_option("--max-streams-per-caller", c.max_streams_per_caller,
                 "streams one caller (token, or address without one) may hold; operator tokens "
                 "are not counted, and with tokens the last quarter of --max-streams (at most "
                 "4) is theirs")
      ->capture_default_str();
  app.add_option("--stream-idle-timeout", c.stream_idle_timeout_s,
                 "seconds a stream may have nothing to send before it ends and frees its slot "
                 "(the client watches again; 0: never)")
      ->capture_default_str();
  app.add_option("--answer-threads", c.answer_threads,
                 "threads computing costly answers (QueryDff, TimeGemms, Compare) not in the "
                 "cache, apart from the threads serving calls; callers take turns")
      ->capture_default_str();
  app.add_option("--answers-per-caller", c.answers_per_caller,
                 "costly answers one caller (token or address) may have waiting or being "
                 "computed; more are refused RESOURCE_EXHAUSTED")
      ->capture_default_str();
  app.add_option("--max-waiting-answers", c.max_waiting_answers,
                 "costly answers waiting for a thread, all callers")
      ->capture_default_str();
  app.add_option("--max-answer-bytes", c.max_answer_bytes,
                 "largest answer sent [bytes]; a larger one is refused, saying how to ask for "
                 "less")
      ->capture_default_str();
  app.add_option("--max-query-gemms", c.max_query_gemms,
                 "GEMMs one QueryDff may rank (candidates of the window × GEMMs of each)")
      ->capture_default_str();
  app.add_option("--max-job-seconds", c.max_job_seconds,
                 "a job's wall-time budget: past it the job fails between GEMMs, its results "
                 "kept (0: none)")
      ->capture_default_str();
  app.add_flag("--check-on-start,!--no-check-on-start", c.check_on_start,
               "run SQLite's quick check on the database before serving (the default); a "
               "corrupt or empty (0-byte) one stops crestd with exit 1");
  app.add_option("--max-list-bytes", c.max_list_bytes,
                 "a ListJobs page ends at this size (or at its limit of jobs); the answer says "
                 "where the next page starts")
      ->capture_default_str();
  app.add_option("--answer-cache", c.answer_cache,
                 "QueryDff, LookupGemm and Predict answers kept in memory until a write changes "
                 "the results (64 MiB at most); 0 turns the cache off")
      ->capture_default_str();
  app.add_option("--max-db-bytes", c.max_db_bytes,
                 "cap on the database file [bytes, >= 1048576; 0: none]: at the cap, or on a full "
                 "disk, a job pauses and is tried again every --full-retry seconds")
      ->capture_default_str();
  app.add_option("--full-retry", c.full_retry_s,
                 "seconds a job paused by a full disk or --max-db-bytes waits before trying again")
      ->capture_default_str();
  app.add_option("--metrics-listen", c.metrics_listen,
                 "serve Prometheus metrics at http://HOST:PORT/metrics (off when empty)");
  app.add_option("--metrics-port-file", c.metrics_port_file, "write the metrics port to this file");
  app.add_option("--fleet-check-interval", c.fleet_check_s,
                 "with --metrics-listen: seconds between checks of the database's devices "
                 "against the fleet median of their GPU model (crest_fleet_device_*; 0: none)")
      ->capture_default_str();
  app.add_option("--calibration", c.calibrations,
                 "load a predictor calibration (crest calibrate --out FILE); repeatable; "
                 "<state-dir>/calibrations/*.json load first");
  app.add_option("--shutdown-grace", c.shutdown_grace_s,
                 "seconds in-flight calls get after SIGTERM/SIGINT")
      ->capture_default_str();
}

}  // namespace crest::service
