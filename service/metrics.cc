#include "metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "crest/common/host_port.h"
#include "crest/common/posix_error.h"
#include "crest/common/str_cat.h"

namespace crest::service {
namespace {

class NoMetrics final : public Metrics {
 public:
  void ObserveRpc(std::string_view, double, std::string_view) override {}
  void SetQueue(int64_t, int64_t) override {}
  void JobEnded(const std::string&) override {}
  void ResultWritten(tuner::Source) override {}
  void BackendBusy(const std::string&, double) override {}
  void AnswerCache(std::string_view, bool) override {}
  void AnswerComputed(std::string_view, bool) override {}
  void SetHeap(double, double) override {}
  void SetFleet(const answers::FleetHealth&, double) override {}
};

// A minimal HTTP/1.0 server for GET /metrics: one connection at a time,
// which is what a Prometheus scraper needs.
class MetricsHttp final {
 public:
  MetricsHttp(int fd, std::shared_ptr<prometheus::Registry> registry)
      : fd_(fd), registry_(std::move(registry)), thread_([this] { Loop(); }) {}
  ~MetricsHttp() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }

 private:
  void Loop() {
    while (!stop_.load()) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const int client = accept(fd_, nullptr, nullptr);
      if (client < 0) continue;
      Answer(client);
      close(client);
    }
  }

  void Answer(int client) {
    std::string request;
    char buf[1024];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
      pollfd p{client, POLLIN, 0};
      if (poll(&p, 1, 2000) <= 0) return;
      const ssize_t n = read(client, buf, sizeof buf);
      if (n <= 0) return;
      request.append(buf, static_cast<size_t>(n));
    }
    std::string status = "200 OK";
    std::string body;
    if (request.starts_with("GET /metrics ") || request.starts_with("GET /metrics?")) {
      body = prometheus::TextSerializer().Serialize(registry_->Collect());
    } else {
      status = "404 Not Found";
      body = "crestd serves GET /metrics\n";
    }
    const std::string response =
        StrCat("HTTP/1.0 ", status, "\r\nContent-Type: text/plain; version=0.0.4\r\n",
               "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
    size_t sent = 0;
    while (sent < response.size()) {
      const ssize_t n = send(client, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  const int fd_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class PrometheusMetrics final : public Metrics {
 public:
  PrometheusMetrics(int listen_fd, std::shared_ptr<prometheus::Registry> registry)
      : registry_(std::move(registry)),
        queue_(prometheus::BuildGauge()
                   .Name("crest_queue_depth")
                   .Help("Jobs queued, not yet running")
                   .Register(*registry_)
                   .Add({})),
        running_(prometheus::BuildGauge()
                     .Name("crest_jobs_running")
                     .Help("Jobs running (at most one per lane)")
                     .Register(*registry_)
                     .Add({})),
        ended_(prometheus::BuildCounter()
                   .Name("crest_jobs_ended_total")
                   .Help("Jobs that reached a final state, by state")
                   .Register(*registry_)),
        results_(prometheus::BuildCounter()
                     .Name("crest_results_written_total")
                     .Help("Results written to the database, by source")
                     .Register(*registry_)),
        latency_(prometheus::BuildHistogram()
                     .Name("crest_rpc_duration_seconds")
                     .Help("Server-side latency of unary calls, by method")
                     .Register(*registry_)),
        errors_(prometheus::BuildCounter()
                    .Name("crest_rpc_errors_total")
                    .Help("Calls that ended with an error, by method and code")
                    .Register(*registry_)),
        busy_(prometheus::BuildCounter()
                  .Name("crest_backend_busy_seconds_total")
                  .Help("Seconds spent inside the backend (the GPU for cuda lanes), by lane")
                  .Register(*registry_)),
        cache_(prometheus::BuildCounter()
                   .Name("crest_answer_cache_total")
                   .Help("Cached answers served (hit) or computed (miss), by method")
                   .Register(*registry_)),
        computed_(prometheus::BuildCounter()
                      .Name("crest_answers_computed_total")
                      .Help("Costly answers computed, by method and thread: serving (gRPC's, a "
                            "small QueryDff while the answer pool and job lanes are idle) or pool")
                      .Register(*registry_)),
        heap_(prometheus::BuildGauge()
                  .Name("crest_heap_bytes")
                  .Help("malloc's heap: in_use (allocated) and free (freed, kept by the "
                        "allocator), before the trim every 10 s")
                  .Register(*registry_)),
        heap_in_use_(heap_.Add({{"state", "in_use"}})),
        heap_free_(heap_.Add({{"state", "free"}})),
        fleet_ratio_(prometheus::BuildGauge()
                         .Name("crest_fleet_device_ratio")
                         .Help("Median of the device's GEMM times over the median of the other "
                               "devices of its GPU model and cuBLASLt version in the database")
                         .Register(*registry_)),
        fleet_slower_(prometheus::BuildGauge()
                          .Name("crest_fleet_device_slower")
                          .Help("1 when the device is judged slower than its fleet beyond the "
                                "threshold and the noise, else 0")
                          .Register(*registry_)),
        fleet_gemms_(prometheus::BuildGauge()
                         .Name("crest_fleet_device_gemms")
                         .Help("GEMMs the device was set against its fleet on")
                         .Register(*registry_)),
        fleet_checked_(prometheus::BuildGauge()
                           .Name("crest_fleet_check_timestamp_seconds")
                           .Help("When the last fleet check ended (Unix time)")
                           .Register(*registry_)
                           .Add({})),
        http_(listen_fd, registry_) {}

  void ObserveRpc(std::string_view method, double seconds, std::string_view code) override {
    static const prometheus::Histogram::BucketBoundaries kBuckets = {
        50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 25e-3, 100e-3, 1};
    const std::string m(method);
    latency_.Add({{"method", m}}, kBuckets).Observe(seconds);
    if (code != "OK") errors_.Add({{"method", m}, {"code", std::string(code)}}).Increment();
  }
  void SetQueue(int64_t queued, int64_t running) override {
    queue_.Set(static_cast<double>(queued));
    running_.Set(static_cast<double>(running));
  }
  void JobEnded(const std::string& state) override { ended_.Add({{"state", state}}).Increment(); }
  void SetHeap(double in_use_bytes, double free_bytes) override {
    heap_in_use_.Set(in_use_bytes);
    heap_free_.Set(free_bytes);
  }
  void SetFleet(const answers::FleetHealth& health, double checked_at_s) override {
    std::lock_guard<std::mutex> lock(fleet_mutex_);
    for (const auto& [family, gauge] : fleet_series_) family->Remove(gauge);
    fleet_series_.clear();
    for (const answers::FleetDevice& d : health.devices) {
      if (d.gemms == 0) continue;  // no fleet to set it against
      const prometheus::Labels labels{{"gpu_model", d.gpu_model},
                                      {"cublaslt", std::to_string(d.cublaslt)},
                                      {"host", d.host},
                                      {"device", d.uuid}};
      prometheus::Gauge& ratio = fleet_ratio_.Add(labels);
      prometheus::Gauge& slower = fleet_slower_.Add(labels);
      prometheus::Gauge& gemms = fleet_gemms_.Add(labels);
      ratio.Set(d.ratio);
      slower.Set(d.verdict == answers::Verdict::kSlower ? 1 : 0);
      gemms.Set(static_cast<double>(d.gemms));
      fleet_series_.insert(
          fleet_series_.end(),
          {{&fleet_ratio_, &ratio}, {&fleet_slower_, &slower}, {&fleet_gemms_, &gemms}});
    }
    fleet_checked_.Set(checked_at_s);
  }
  void AnswerCache(std::string_view method, bool hit) override {
    cache_.Add({{"method", std::string(method)}, {"outcome", hit ? "hit" : "miss"}}).Increment();
  }
  void AnswerComputed(std::string_view method, bool on_serving_thread) override {
    computed_
        .Add({{"method", std::string(method)}, {"thread", on_serving_thread ? "serving" : "pool"}})
        .Increment();
  }
  void ResultWritten(tuner::Source source) override {
    results_.Add({{"source", std::string(tuner::SourceName(source))}}).Increment();
  }
  void BackendBusy(const std::string& lane, double seconds) override {
    busy_.Add({{"lane", lane}}).Increment(seconds);
  }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge& queue_;
  prometheus::Gauge& running_;
  prometheus::Family<prometheus::Counter>& ended_;
  prometheus::Family<prometheus::Counter>& results_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& errors_;
  prometheus::Family<prometheus::Counter>& busy_;
  prometheus::Family<prometheus::Counter>& cache_;
  prometheus::Family<prometheus::Counter>& computed_;
  prometheus::Family<prometheus::Gauge>& heap_;
  prometheus::Gauge& heap_in_use_;
  prometheus::Gauge& heap_free_;
  prometheus::Family<prometheus::Gauge>& fleet_ratio_;
  prometheus::Family<prometheus::Gauge>& fleet_slower_;
  prometheus::Family<prometheus::Gauge>& fleet_gemms_;
  prometheus::Gauge& fleet_checked_;
  std::mutex fleet_mutex_;
  // Every crest_fleet_device_* series, with its family.
  std::vector<std::pair<prometheus::Family<prometheus::Gauge>*, prometheus::Gauge*>>
      fleet_series_;  // GUARDED_BY(fleet_mutex_)
  MetricsHttp http_;  // last: stops serving before the metrics go
};

}  // namespace

std::unique_ptr<Metrics> Metrics::Disabled() { return std::make_unique<NoMetrics>(); }

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Serve(const std::string& listen,
                                                        int* bound_port) {
  // A bare PORT means every interface.
  const auto parsed =
      ParseHostPort(listen.find(':') == std::string::npos ? "0.0.0.0:" + listen : listen, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (!parsed ||
      inet_pton(AF_INET, parsed->host == "localhost" ? "127.0.0.1" : parsed->host.c_str(),
                &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        StrCat("--metrics-listen '", listen, "' is not IPv4-HOST:PORT (port 0 picks a free one)"));
  }
  addr.sin_port = htons(static_cast<uint16_t>(parsed->port));
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  socklen_t len = sizeof addr;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = PosixErrorText(errno);
    if (fd >= 0) close(fd);
    return absl::UnavailableError(StrCat("--metrics-listen ", listen, ": ", why));
  }
  if (bound_port != nullptr) *bound_port = ntohs(addr.sin_port);
  return std::unique_ptr<Metrics>(
      std::make_unique<PrometheusMetrics>(fd, std::make_shared<prometheus::Registry>()));
}

}  // namespace crest::service
