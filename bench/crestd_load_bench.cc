// crestd under load: LookupGemm and QueryDff throughput and latency
// (p50/p99) over loopback with 1, 8 and 64 concurrent clients, against a
// database of >= 1,000,000 measurement rows, without and then with a sweep
// writing into the same database (predictions for another GPU, as fast as
// the model goes), each with the answer cache off (--answer-cache 0) and on,
// side by side in one run. Each row also gives crestd's and the clients'
// CPU time per call (they share the machine's cores) and the results the
// sweep wrote per second meanwhile. The baseline row is gRPC's own health
// check (grpc.health.v1.Health/Check): what a call costs crestd that does no
// work. Targets (issue 16, 2-core machine): QueryDff >= 10,000 calls/s at
// 8-64 clients and p99 <= 2 ms, LookupGemm >= 20,000/s; (issue 39) uncached
// QueryDff <= 300 us of crestd CPU (its summary line also says how much of
// that was the kernel's, system time). Figures and what they mean:
// docs/crestd.md, "Load".
//
// Usage: crestd_load_bench CRESTD_BIN STATE_DIR [SECONDS_PER_RUN] [ONLY]
//   STATE_DIR/crest.db must exist (scripts/bench.sh makes it with store_bench).
//   ONLY runs the rows whose "cache method sweep clients" line contains it,
//   e.g. "on QueryDff idle 64" (one row, to profile), "QueryDff" (twelve).
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"
#include "process_stats.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double per_s = 0, p50_us = 0, p99_us = 0;
  int64_t errors = 0;
  // The errors by kind: "CODE: the first message of that code", or "a wrong
  // answer" (OK, but not the answer the method checks for).
  std::map<std::string, int64_t> error_kinds;
  // CPU time per call [us] of crestd (with its sweep lane, in the "writing"
  // rows) and of this process, the clients: on one machine they share the
  // cores, so the server's own cost is what says what it could serve alone.
  double server_cpu_us = 0, client_cpu_us = 0;
  double server_system_us = 0;  // of server_cpu_us, the kernel's time for crestd
  double writes_per_s = 0;      // results the sweep wrote meanwhile ("writing" rows)
};

double OwnCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// A client's stubs over its one channel.
struct Stubs {
  std::unique_ptr<crest::v1::Crest::Stub> crest;
  std::unique_ptr<grpc::GenericStub> generic;  // for grpc.health.v1
};

// One client: its own channel (as a separate process would have) and one
// call in flight at a time, started again from the previous call's callback
// until the run ends. Clients are driven by gRPC's callback API, so the
// load generator needs a few threads instead of one per client: on the
// 2-core machine a blocking thread per client took two thirds of the CPU
// (perf, 64 clients), and the figures were the client's, not crestd's.
template <typename Method>
class Client {
 public:
  Client(const std::string& address, int id, Method method, Clock::time_point end, std::latch& done)
      : method_(std::move(method)), end_(end), done_(done) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", id);  // distinct channels, not a shared subchannel
    auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    stubs_.crest = crest::v1::Crest::NewStub(channel);
    stubs_.generic = std::make_unique<grpc::GenericStub>(channel);
  }
  void Start() {
    context_ = std::make_unique<grpc::ClientContext>();
    response_.Clear();
    started_ = Clock::now();
    method_.Call(stubs_, context_.get(), &response_, [this](grpc::Status status) {
      const auto now = Clock::now();
      us_.push_back(std::chrono::duration<double, std::micro>(now - started_).count());
      if (!status.ok()) {
        CountError(status);
      } else if (!method_.Check(response_)) {
        error_kinds_["a wrong answer"]++;
      }
      if (now < end_) {
        Start();
      } else {
        done_.count_down();
      }
    });
  }
  const std::vector<double>& us() const { return us_; }
  int64_t errors() const {
    int64_t all = 0;
    for (const auto& [kind, count] : error_kinds_) all += count;
    return all;
  }
  const std::map<std::string, int64_t>& error_kinds() const { return error_kinds_; }

 private:
  void CountError(const grpc::Status& status) {
    const auto code = static_cast<absl::StatusCode>(status.error_code());
    const auto first =
        first_message_.try_emplace(code, status.error_message().substr(0, 160)).first;
    error_kinds_[absl::StatusCodeToString(code) + ": " + first->second]++;
  }

  Method method_;
  const Clock::time_point end_;
  std::latch& done_;
  Stubs stubs_;
  std::unique_ptr<grpc::ClientContext> context_;
  typename Method::Response response_;
  Clock::time_point started_;
  std::vector<double> us_;
  std::map<std::string, int64_t> error_kinds_;  // errors by kind, as Result's
  std::map<absl::StatusCode, std::string> first_message_;
};

template <typename Method>
Result Load(const std::string& address, pid_t server, int clients, double seconds,
            const Method& method) {
  const crest::bench::CpuSeconds server_cpu = crest::bench::ProcessCpu(server);
  const double client_cpu = OwnCpuSeconds();
  std::latch done(clients);
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  std::vector<std::unique_ptr<Client<Method>>> all_clients;
  for (int c = 0; c < clients; ++c) {
    all_clients.push_back(std::make_unique<Client<Method>>(address, c, method, end, done));
  }
  for (auto& c : all_clients) c->Start();
  done.wait();
  std::vector<double> all;
  Result r;
  for (const auto& c : all_clients) {
    all.insert(all.end(), c->us().begin(), c->us().end());
    r.errors += c->errors();
    for (const auto& [kind, count] : c->error_kinds()) r.error_kinds[kind] += count;
  }
  std::sort(all.begin(), all.end());
  r.per_s = static_cast<double>(all.size()) / seconds;
  r.p50_us = all.empty() ? 0 : all[all.size() / 2];
  r.p99_us = all.empty() ? 0 : all[all.size() * 99 / 100];
  if (!all.empty()) {
    const double calls = static_cast<double>(all.size());
    const crest::bench::CpuSeconds server_now = crest::bench::ProcessCpu(server);
    r.server_cpu_us = (server_now.Total() - server_cpu.Total()) / calls * 1e6;
    r.server_system_us = (server_now.system - server_cpu.system) / calls * 1e6;
    r.client_cpu_us = (OwnCpuSeconds() - client_cpu) / calls * 1e6;
  }
  return r;
}

struct Lookup {
  using Response = crest::v1::LookupGemmResponse;
  Lookup() {
    request.set_gpu("h100");
    request.mutable_gemm()->set_m(8192);
    request.mutable_gemm()->set_n(4096);
    request.mutable_gemm()->set_k(10922);
  }
  template <typename Done>
  void Call(Stubs& stubs, grpc::ClientContext* context, Response* out, Done done) const {
    stubs.crest->async()->LookupGemm(context, &request, out, std::move(done));
  }
  bool Check(const Response& out) const { return out.source() == crest::v1::SOURCE_MEASURED; }
  crest::v1::LookupGemmRequest request;
};

struct QueryDff {
  using Response = crest::v1::QueryDffResponse;
  QueryDff() {
    request.set_hidden(4096);
    request.set_gpu("h100");
    request.set_top(10);
  }
  template <typename Done>
  void Call(Stubs& stubs, grpc::ClientContext* context, Response* out, Done done) const {
    stubs.crest->async()->QueryDff(context, &request, out, std::move(done));
  }
  bool Check(const Response& out) const { return out.measured() == 257; }
  crest::v1::QueryDffRequest request;
};

// gRPC's health check of the whole server (service ""), as bytes: the
// request is empty; SERVING is field 1 = 1.
struct Health {
  using Response = grpc::ByteBuffer;
  Health() {
    grpc::Slice empty("");
    request = grpc::ByteBuffer(&empty, 1);
  }
  template <typename Done>
  void Call(Stubs& stubs, grpc::ClientContext* context, Response* out, Done done) const {
    stubs.generic->UnaryCall(context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                             out, std::move(done));
  }
  bool Check(const Response& out) const {
    std::vector<grpc::Slice> slices;
    if (!out.Dump(&slices).ok()) return false;
    std::string bytes;
    for (const auto& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return bytes == std::string("\x08\x01", 2);
  }
  grpc::ByteBuffer request;
};

struct Row {
  std::string method, sweep;
  int clients = 0;
  Result result;
};

// The row's name, "on QueryDff idle 64", as ONLY selects it.
std::string RowName(bool cached, const std::string& method, bool sweeping, int clients) {
  return (cached ? "on " : "off ") + method + (sweeping ? " writing " : " idle ") +
         std::to_string(clients);
}

constexpr const char* kMethods[] = {"Health", "LookupGemm", "QueryDff"};
constexpr int kClients[] = {1, 8, 64};

bool AnySelected(bool cached, bool sweeping, const std::string& only) {
  for (const char* method : kMethods) {
    for (int clients : kClients) {
      if (RowName(cached, method, sweeping, clients).find(only) != std::string::npos) return true;
    }
  }
  return false;
}

// The "writing" rows' sweep: model predictions for another GPU (a100), as
// fast as crestd writes them. A thread watches the job every 50 ms and
// submits the next when one ends, so the writing rows run while results are
// written; each row says how many were written during it (the jobs' progress).
class Sweep {
 public:
  explicit Sweep(crest::v1::Crest::Stub& control) : control_(control) {}
  ~Sweep() { Stop(); }

  // Starts the first job and the watcher. False (reason on stderr) when the
  // job cannot be submitted.
  bool Start() {
    if (Running()) return true;
    if (!Submit()) return false;
    watcher_ = std::thread([this] {
      while (!stop_.load()) {
        if (!Update() && !Submit()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // under way
    return true;
  }
  bool Running() const { return watcher_.joinable(); }
  // Results written since the last call.
  int64_t TakeWritten() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(written_, 0);
  }
  // Stops the watcher and cancels the running job; returns the results
  // written in all, and how many jobs wrote them.
  std::pair<int64_t, int> Stop() {
    if (!watcher_.joinable()) return {total_, jobs_};
    stop_ = true;
    watcher_.join();
    Update();
    crest::v1::CancelJobRequest cancel;
    cancel.set_id(id_);
    crest::v1::Job job;
    grpc::ClientContext context;
    (void)control_.CancelJob(&context, cancel, &job);  // ended already: nothing to stop
    return {total_, jobs_};
  }

 private:
  bool Submit() {
    crest::v1::SubmitJobRequest submit;
    // A new hidden size each time: never the same spec as an ended job.
    submit.mutable_spec()->set_json(R"({"version": 1, "gpu": "a100", "dff": [{"hidden": )" +
                                    std::to_string(16384 + 64 * jobs_) +
                                    R"(, "window": 8192, "pass": "train"}]})");
    submit.set_force(true);  // written again even where earlier runs wrote it
    crest::v1::SubmitJobResponse job;
    grpc::ClientContext context;
    const grpc::Status s = control_.SubmitJob(&context, submit, &job);
    if (!s.ok()) {
      std::fprintf(stderr, "submit: %s\n", s.error_message().c_str());
      return false;
    }
    id_ = job.job().id();
    done_ = 0;
    jobs_++;
    return true;
  }
  // Reads the job's progress; true while it is queued or running.
  bool Update() {
    crest::v1::GetJobRequest request;
    request.set_id(id_);
    crest::v1::Job job;
    grpc::ClientContext context;
    if (!control_.GetJob(&context, request, &job).ok()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      written_ += job.done() - done_;
    }
    total_ += job.done() - done_;
    done_ = job.done();
    return job.state() == crest::v1::JOB_STATE_QUEUED ||
           job.state() == crest::v1::JOB_STATE_RUNNING;
  }

  crest::v1::Crest::Stub& control_;
  std::thread watcher_;
  std::atomic<bool> stop_{false};
  int64_t id_ = 0, done_ = 0, total_ = 0;  // the watcher's, once it runs
  int jobs_ = 0;
  std::mutex mutex_;
  int64_t written_ = 0;  // GUARDED_BY(mutex_)
};

// One daemon, one cache setting: every method, client count and sweep state
// whose row name contains `only`.
bool RunAll(const char* crestd, const std::string& state, double seconds, bool cached,
            const std::string& only, std::vector<Row>& rows) {
  if (!AnySelected(cached, false, only) && !AnySelected(cached, true, only)) return true;
  crest::testing::CrestdProcess daemon;
  std::string why;
  std::vector<std::string> args = {"--log-level", "warn"};
  if (!cached) args.insert(args.end(), {"--answer-cache", "0"});
  std::fflush(stdout);  // the daemon's fork must not print our buffer again
  if (!daemon.Start(crestd, state, args, &why)) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return false;
  }
  const std::string address = daemon.address();
  auto control =
      crest::v1::Crest::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  Sweep sweep(*control);
  for (bool sweeping : {false, true}) {
    if (!AnySelected(cached, sweeping, only)) continue;
    for (const char* method : kMethods) {
      for (int clients : kClients) {
        if (RowName(cached, method, sweeping, clients).find(only) == std::string::npos) continue;
        if (sweeping && !sweep.Running()) {
          if (!sweep.Start()) return false;
          // The sweep with no clients: what the rows' writes/s compare with.
          sweep.TakeWritten();
          std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
          std::printf("%-6s the sweep alone writes %.0f results/s\n", cached ? "on" : "off",
                      static_cast<double>(sweep.TakeWritten()) / seconds);
        }
        sweep.TakeWritten();
        const std::string name = method;
        Result r = name == "Health" ? Load(address, daemon.pid(), clients, seconds, Health())
                   : name == "LookupGemm"
                       ? Load(address, daemon.pid(), clients, seconds, Lookup())
                       : Load(address, daemon.pid(), clients, seconds, QueryDff());
        r.writes_per_s = static_cast<double>(sweep.TakeWritten()) / seconds;
        rows.push_back({method, sweeping ? "writing" : "idle", clients, r});
        std::printf("%-6s %-10s %-7s %7d %12.0f %10.0f %10.0f %12.1f %12.1f %10.0f %7lld\n",
                    cached ? "on" : "off", method, sweeping ? "writing" : "idle", clients, r.per_s,
                    r.p50_us, r.p99_us, r.server_cpu_us, r.client_cpu_us, r.writes_per_s,
                    static_cast<long long>(r.errors));
        for (const auto& [kind, count] : r.error_kinds) {
          std::printf("         %lld of the errors: %s\n", static_cast<long long>(count),
                      kind.c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  const auto [written, jobs] = sweep.Stop();
  if (jobs > 0) {
    std::printf("the sweep wrote %lld predictions (in %d jobs) while the clients queried\n",
                static_cast<long long>(written), jobs);
  }
  daemon.Stop(SIGTERM);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: crestd_load_bench CRESTD_BIN STATE_DIR [SECONDS_PER_RUN] [ONLY]\n"
                 "  ONLY: run the rows whose \"cache method sweep clients\" contains it,\n"
                 "        e.g. \"on QueryDff idle 64\"\n");
    return 2;
  }
  const std::string state = argv[2];
  if (access((state + "/crest.db").c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "STATE_DIR: %s/crest.db does not exist; make it with store_bench --keep DIR "
                 "and rename DIR/bench.db to crest.db (scripts/bench.sh does)\n",
                 state.c_str());
    return 2;
  }
  double seconds = 3.0;
  if (argc > 3) {
    char* end = nullptr;
    seconds = std::strtod(argv[3], &end);
    if (end == argv[3] || *end != '\0' || !(seconds > 0 && seconds <= 3600)) {
      std::fprintf(stderr, "SECONDS_PER_RUN: \"%s\" is not a number of seconds in (0, 3600]\n",
                   argv[3]);
      return 2;
    }
  }
  const std::string only = argc > 4 ? argv[4] : "";
  bool any = false;
  for (bool cached : {false, true}) {
    for (bool sweeping : {false, true}) any = any || AnySelected(cached, sweeping, only);
  }
  if (!any) {
    std::fprintf(stderr,
                 "ONLY: \"%s\" names no row; rows are \"on|off LookupGemm|QueryDff "
                 "idle|writing 1|8|64\", e.g. \"on QueryDff idle 64\"\n",
                 only.c_str());
    return 2;
  }
  std::printf("database in %s, %u hardware threads, %.0f s per run\n", state.c_str(),
              std::thread::hardware_concurrency(), seconds);
  std::printf("%-6s %-10s %-7s %7s %12s %10s %10s %12s %12s %10s %7s\n", "cache", "method", "sweep",
              "clients", "calls/s", "p50_us", "p99_us", "crestd_cpu_us", "client_cpu_us",
              "writes/s", "errors");
  std::vector<Row> off, on;
  if (!RunAll(argv[1], state, seconds, /*cached=*/false, only, off)) return 1;
  if (!RunAll(argv[1], state, seconds, /*cached=*/true, only, on)) return 1;
  const Row* health = nullptr;
  const Row* dff = nullptr;
  for (const Row& r : off) {
    if (r.sweep != "idle" || r.clients != 1) continue;
    if (r.method == "Health") health = &r;
    if (r.method == "QueryDff") dff = &r;
  }
  if (health != nullptr && dff != nullptr && health->result.server_cpu_us > 0) {
    std::printf(
        "\nuncached QueryDff, 1 client, idle: %.1f us of crestd CPU a call, %.1fx the health "
        "check's %.1f us  [target <= 300 us: %s]\n"
        "  of which system time (the kernel's work for crestd; docs/crestd.md says what it was "
        "on a 2-core VM): %.1f us; the health check's %.1f us\n",
        dff->result.server_cpu_us, dff->result.server_cpu_us / health->result.server_cpu_us,
        health->result.server_cpu_us, dff->result.server_cpu_us <= 300 ? "met" : "MISSED",
        dff->result.server_system_us, health->result.server_system_us);
  }
  if (off.size() != on.size()) return 0;  // ONLY chose rows of one side: no pairs
  std::printf(
      "\ncached vs uncached, side by side (crestd cpu: its CPU time per call, us):\n"
      "%-10s %-7s %7s %12s %12s %7s %10s %10s %10s %10s\n",
      "method", "sweep", "clients", "off calls/s", "on calls/s", "ratio", "off p99", "on p99",
      "off cpu", "on cpu");
  for (size_t i = 0; i < off.size() && i < on.size(); ++i) {
    const Result& a = off[i].result;
    const Result& b = on[i].result;
    std::printf("%-10s %-7s %7d %12.0f %12.0f %6.1fx %10.0f %10.0f %10.1f %10.1f\n",
                off[i].method.c_str(), off[i].sweep.c_str(), off[i].clients, a.per_s, b.per_s,
                a.per_s > 0 ? b.per_s / a.per_s : 0, a.p99_us, b.p99_us, a.server_cpu_us,
                b.server_cpu_us);
  }
  return 0;
}
