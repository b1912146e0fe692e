// Internal to crestd: Prometheus metrics (prometheus-cpp's registry and text
// format), served by a small HTTP/1.0 listener at GET /metrics when
// --metrics-listen is given, and absent otherwise (every method is then a
// no-op). Names:
//   crest_queue_depth                 gauge    jobs queued, not yet running
//   crest_jobs_running                gauge    jobs running (at most one per lane)
//   crest_jobs_ended_total{state}     counter  jobs that reached done/failed/cancelled
//   crest_results_written_total{source}  counter  measurements / predictions written
//   crest_rpc_duration_seconds{method}   histogram  server-side latency of unary calls
//   crest_rpc_errors_total{method,code}  counter
//   crest_backend_busy_seconds_total{lane}  counter  time inside the backend (the GPU, for cuda
//   lanes)
//   crest_answer_cache_total{method,outcome}  counter  cached answers served ("hit") or
//   computed ("miss")
//   crest_answers_computed_total{method,thread}  counter  costly answers computed, by where:
//   "serving" (crestd's serving thread: a small QueryDff while the answer pool and the job lanes
//   are idle) or "pool" (--answer-threads) crest_heap_bytes{state}          gauge    malloc's heap:
//   "in_use" (allocated), "free" (freed but kept by the allocator), every 10 s before it is trimmed
//   crest_fleet_device_ratio{gpu_model,cublaslt,host,device}  gauge  the median of the
//   device's GEMM times over the other devices' median of its fleet (answers/fleet_health.h),
//   for devices of the database with a fleet; refreshed every --fleet-check-interval
//   crest_fleet_device_slower{…}   gauge  1 when that device is judged slower, else 0
//   crest_fleet_device_gemms{…}    gauge  the GEMMs it was set against the fleet on
//   crest_fleet_check_timestamp_seconds  gauge  when the last check ended (Unix time)
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crest/answers/fleet_health.h"
#include "crest/tuner/source.h"

namespace crest::service {

class Metrics {
 public:
  virtual ~Metrics() = default;
  // Metrics served on `listen` ("HOST:PORT"); *bound_port receives the port.
  static absl::StatusOr<std::unique_ptr<Metrics>> Serve(const std::string& listen, int* bound_port);
  static std::unique_ptr<Metrics> Disabled();

  virtual void ObserveRpc(std::string_view method, double seconds, std::string_view code) = 0;
  virtual void SetQueue(int64_t queued, int64_t running) = 0;
  virtual void JobEnded(const std::string& state) = 0;
  virtual void ResultWritten(tuner::Source source) = 0;
  virtual void BackendBusy(const std::string& lane, double seconds) = 0;
  virtual void AnswerCache(std::string_view method, bool hit) = 0;
  // A costly answer computed on crestd's serving thread (true) or the answer pool's.
  virtual void AnswerComputed(std::string_view method, bool on_serving_thread) = 0;
  virtual void SetHeap(double in_use_bytes, double free_bytes) = 0;
  // Replaces every crest_fleet_device_* series with the devices of `health`
  // that have a fleet; `checked_at_s` is when the check ended.
  virtual void SetFleet(const answers::FleetHealth& health, double checked_at_s) = 0;
};

}  // namespace crest::service
