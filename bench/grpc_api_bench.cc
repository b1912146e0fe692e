// What a unary call costs a gRPC server's CPU with gRPC's callback API
// (crestd's) and with its completion-queue API served by the server's own
// threads, side by side in one run on one machine: the floor under every
// crestd answer, and what moving crestd's unary methods to the
// completion-queue API could save (issue 39: an uncached QueryDff in
// <= 300 us of crestd's CPU, a third of which was the kernel's).
//
// Each row starts a server process (this program again, with --serve), one
// method that answers a fixed GetNodeInfoResponse and does no other work,
// and calls it from one client over one channel, one call at a time, for
// SECONDS; the server's CPU (/proc, user and system) is read before and
// after. Rows:
//   callback  the generated CallbackService: gRPC 1.51 serves its callbacks
//             from clamp(cores / 2, 2, 16) threads of its own
//   cq-1      the generated AsyncService: one completion queue, one thread
//             of the server's own calling Next and answering
//   cq-2      the same queue served by two threads (what a server does to use
//             two cores)
//   sync      the generated synchronous Service, gRPC's own pool of threads
//             (its defaults: one to two polling)
//   cq-1+cb   cq-1 with gRPC's default health service on, which in 1.51 is a
//             callback service: whether any callback method in a server
//             brings gRPC's callback threads back into the polling
//   sync+cb   sync with the default health service on
//   cq-1+refl cq-1 with gRPC's server reflection, a synchronous service with
//             threads of its own (crestd serves it beside its queue)
// The other servers do not enable the default health service.
// WORK_US: CPU time each call spends in the server before it is answered
// (on the serving thread; 0 by default), as an answer's computation would:
// whether the API's cost stays when calls are not empty.
//
// Usage: grpc_api_bench [SECONDS_PER_ROW [ROUNDS [WORK_US]]]   (2 s, 3 rounds, 0 us)
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "percentiles.h"
#include "process_stats.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kModes[] = {"callback", "cq-1",    "cq-2",     "sync",
                                  "cq-1+cb",  "sync+cb", "cq-1+refl"};

// The serving thread's CPU time [us].
double ThreadCpuUs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// Spends `us` of this thread's CPU time (a call's work), in user space:
// the clock, a system call, is read every few microseconds.
void Work(double us) {
  if (us <= 0) return;
  const double end = ThreadCpuUs() + us;
  volatile uint64_t sink = 0;
  while (ThreadCpuUs() < end) {
    for (int i = 0; i < 4096; ++i) sink = sink + static_cast<uint64_t>(i);
  }
}

// The answer every server gives: about the size of a node's description.
crest::v1::GetNodeInfoResponse Answer() {
  crest::v1::GetNodeInfoResponse r;
  r.set_version("grpc_api_bench");
  r.set_model_version("none");
  r.set_host(std::string(64, 'h'));
  return r;
}

class CallbackServer final : public crest::v1::Crest::CallbackService {
 public:
  explicit CallbackServer(double work_us) : work_us_(work_us) {}
  grpc::ServerUnaryReactor* GetNodeInfo(grpc::CallbackServerContext* context,
                                        const crest::v1::GetNodeInfoRequest*,
                                        crest::v1::GetNodeInfoResponse* out) override {
    Work(work_us_);
    *out = answer_;
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  const double work_us_;
  const crest::v1::GetNodeInfoResponse answer_ = Answer();
};

class SyncServer final : public crest::v1::Crest::Service {
 public:
  explicit SyncServer(double work_us) : work_us_(work_us) {}
  grpc::Status GetNodeInfo(grpc::ServerContext*, const crest::v1::GetNodeInfoRequest*,
                           crest::v1::GetNodeInfoResponse* out) override {
    Work(work_us_);
    *out = answer_;
    return grpc::Status::OK;
  }

 private:
  const double work_us_;
  const crest::v1::GetNodeInfoResponse answer_ = Answer();
};

// One call of the completion-queue server: asked for, then answered, then
// replaced by a new one.
class QueuedCall {
 public:
  QueuedCall(crest::v1::Crest::AsyncService& service, grpc::ServerCompletionQueue& cq,
             const crest::v1::GetNodeInfoResponse& answer, double work_us)
      : service_(service), cq_(cq), answer_(answer), work_us_(work_us) {
    service_.RequestGetNodeInfo(&context_, &request_, &writer_, &cq_, &cq_, this);
  }
  // The queue returned this call's tag: answer it, or (once answered, or
  // when the server shuts down) replace it.
  void Proceed(bool ok) {
    if (ok && !answered_) {
      answered_ = true;
      Work(work_us_);
      writer_.Finish(answer_, grpc::Status::OK, this);
      return;
    }
    if (ok) new QueuedCall(service_, cq_, answer_, work_us_);
    delete this;
  }

 private:
  crest::v1::Crest::AsyncService& service_;
  grpc::ServerCompletionQueue& cq_;
  const crest::v1::GetNodeInfoResponse& answer_;
  const double work_us_;
  grpc::ServerContext context_;
  crest::v1::GetNodeInfoRequest request_;
  grpc::ServerAsyncResponseWriter<crest::v1::GetNodeInfoResponse> writer_{&context_};
  bool answered_ = false;
};

// Runs a server of `mode` until killed; prints its port on stdout first.
int Serve(std::string_view mode, double work_us) {
  if (std::find(std::begin(kModes), std::end(kModes), mode) == std::end(kModes)) {
    std::fprintf(stderr,
                 "grpc_api_bench: --serve %s: no such server (callback, cq-1, cq-2, sync, "
                 "cq-1+cb, sync+cb, cq-1+refl)\n",
                 std::string(mode).c_str());
    return 2;
  }
  grpc::EnableDefaultHealthCheckService(mode.ends_with("+cb"));
  if (mode.ends_with("+refl")) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  CallbackServer callback(work_us);
  SyncServer sync(work_us);
  crest::v1::Crest::AsyncService queued;
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  if (mode == "callback") {
    builder.RegisterService(&callback);
  } else if (mode.starts_with("sync")) {
    builder.RegisterService(&sync);
  } else {
    builder.RegisterService(&queued);
    cq = builder.AddCompletionQueue();
  }
  auto server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "grpc_api_bench: the %s server did not start\n",
                 std::string(mode).c_str());
    return 1;
  }
  std::printf("%d\n", port);
  std::fflush(stdout);
  if (cq == nullptr) {
    server->Wait();
    return 0;
  }
  const auto answer = Answer();
  for (int i = 0; i < 4; ++i) new QueuedCall(queued, *cq, answer, work_us);
  auto loop = [&cq] {
    void* tag = nullptr;
    bool ok = false;
    while (cq->Next(&tag, &ok)) static_cast<QueuedCall*>(tag)->Proceed(ok);
  };
  std::vector<std::thread> threads(mode == "cq-2" ? 2 : 1);
  for (auto& t : threads) t = std::thread(loop);
  for (auto& t : threads) t.join();
  return 0;
}

struct Server {
  pid_t pid = -1;
  int port = 0;
};

Server Start(const char* self, const char* mode, const std::string& work_us) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no server outlives a bench stopped midway
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "--serve", mode, work_us.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char text[32] = {};
  const ssize_t n = read(fds[0], text, sizeof(text) - 1);
  close(fds[0]);
  if (pid < 0 || n <= 0) return {pid, 0};
  return {pid, std::atoi(text)};
}

void Stop(const Server& s) {
  if (s.pid <= 0) return;
  kill(s.pid, SIGKILL);
  waitpid(s.pid, nullptr, 0);
}

struct Row {
  double calls_per_s = 0, user_us = 0, system_us = 0;
  int64_t errors = 0;
};

// One client, one call at a time, for `seconds` after a warm-up.
Row Measure(const Server& s, double seconds) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(s.port),
                                     grpc::InsecureChannelCredentials());
  auto stub = crest::v1::Crest::NewStub(channel);
  Row row;
  auto call = [&] {
    grpc::ClientContext context;
    crest::v1::GetNodeInfoRequest request;
    crest::v1::GetNodeInfoResponse response;
    if (!stub->GetNodeInfo(&context, request, &response).ok()) ++row.errors;
  };
  for (int i = 0; i < 500; ++i) call();
  row.errors = 0;
  const auto before = crest::bench::ProcessCpu(s.pid);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  int64_t calls = 0;
  while (Clock::now() < end) {
    call();
    ++calls;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const auto after = crest::bench::ProcessCpu(s.pid);
  row.calls_per_s = static_cast<double>(calls) / wall;
  row.user_us = (after.user - before.user) * 1e6 / static_cast<double>(calls);
  row.system_us = (after.system - before.system) * 1e6 / static_cast<double>(calls);
  return row;
}

bool ParseArg(const char* text, double low, double high, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= low && v <= high)) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2, rounds = 3, work_us = 0;
  if (argc == 4 && std::strcmp(argv[1], "--serve") == 0) {
    return ParseArg(argv[3], 0, 1e5, &work_us) ? Serve(argv[2], work_us) : 2;
  }
  if ((argc > 1 && !ParseArg(argv[1], 0.1, 600, &seconds)) ||
      (argc > 2 && (!ParseArg(argv[2], 1, 100, &rounds) || rounds != std::floor(rounds))) ||
      (argc > 3 && !ParseArg(argv[3], 0, 1e5, &work_us)) || argc > 4) {
    std::fprintf(stderr,
                 "usage: grpc_api_bench [SECONDS_PER_ROW [ROUNDS [WORK_US]]]\n"
                 "  SECONDS_PER_ROW in [0.1, 600] (2), ROUNDS a whole number in [1, 100] (3),\n"
                 "  WORK_US, CPU time a call spends in the server, in [0, 100000] (0)\n");
    return 2;
  }
  const std::string work = std::to_string(work_us);
  std::printf(
      "gRPC %s, %u hardware threads, %.1f s a row, %.0f us of work a call, rounds alternate "
      "the servers\n",
      grpc::Version().c_str(), std::thread::hardware_concurrency(), seconds, work_us);
  std::printf("%-6s %-9s %10s %12s %14s %14s %7s\n", "round", "server", "calls/s", "cpu_us/call",
              "user_us/call", "system_us/call", "errors");
  std::map<std::string, std::vector<double>> cpu;
  int64_t failed = 0;
  for (int round = 1; round <= static_cast<int>(rounds); ++round) {
    for (const char* mode : kModes) {
      const Server s = Start("/proc/self/exe", mode, work);
      if (s.port == 0) {
        Stop(s);
        std::fprintf(stderr, "grpc_api_bench: the %s server did not start\n", mode);
        return 1;
      }
      const Row r = Measure(s, seconds);
      Stop(s);
      std::printf("%-6d %-9s %10.0f %12.1f %14.1f %14.1f %7lld\n", round, mode, r.calls_per_s,
                  r.user_us + r.system_us, r.user_us, r.system_us,
                  static_cast<long long>(r.errors));
      std::fflush(stdout);
      cpu[mode].push_back(r.user_us + r.system_us);
      failed += r.errors;
    }
  }
  if (failed > 0) {
    // A failed call costs the server less than an answered one: no figure.
    std::fprintf(stderr, "grpc_api_bench: %lld calls failed (the rows' errors): no summary\n",
                 static_cast<long long>(failed));
    return 1;
  }
  // The benches' p50 (percentiles.h): the middle round, the lower middle of
  // an even count.
  auto p50 = [&cpu](const char* mode) { return crest::bench::Summarize(cpu[mode]).p50_us; };
  const double base = p50("callback");
  std::printf("\nserver CPU a call, p50 of %d rounds%s:", static_cast<int>(rounds),
              static_cast<int>(rounds) % 2 == 0 ? " (the lower middle one)" : "");
  for (const char* mode : kModes) {
    std::printf("  %s %.1f us (%.2fx)", mode, p50(mode), p50(mode) / base);
  }
  std::printf("\n");
  return 0;
}
