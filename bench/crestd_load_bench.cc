// crestd under load: LookupGemm and QueryDff throughput and latency
// (p50/p99) over loopback with 1, 8 and 64 concurrent clients, against a
// database of >= 1,000,000 measurement rows, without and then with a sweep
// writing into the same database (predictions for another GPU, as fast as
// the model goes), each with the answer cache off (--answer-cache 0) and on,
// side by side in one run. Targets (issue 16, 2-core machine): QueryDff
// >= 10,000 calls/s at 8-64 clients and p99 <= 2 ms, LookupGemm >= 20,000/s.
//
// Usage: crestd_load_bench CRESTD_BIN STATE_DIR [SECONDS_PER_RUN]
//   STATE_DIR/crest.db must exist (scripts/bench.sh makes it with store_bench).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double per_s = 0, p50_us = 0, p99_us = 0;
  int64_t errors = 0;
};

template <typename Call>
Result Load(const std::string& address, int clients, double seconds, Call call) {
  std::vector<std::vector<double>> us(static_cast<size_t>(clients));
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> threads;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      // One channel per client, as separate processes would have.
      grpc::ChannelArguments args;
      args.SetInt("grpc.channel_id", c);  // distinct channels, not a shared subchannel
      auto stub = crest::v1::Crest::NewStub(
          grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
      while (Clock::now() < end) {
        const auto start = Clock::now();
        if (!call(*stub)) errors++;
        us[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (auto& v : us) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Result r;
  r.per_s = static_cast<double>(all.size()) / seconds;
  r.p50_us = all.empty() ? 0 : all[all.size() / 2];
  r.p99_us = all.empty() ? 0 : all[all.size() * 99 / 100];
  r.errors = errors.load();
  return r;
}

bool Lookup(crest::v1::Crest::Stub& stub) {
  crest::v1::LookupGemmRequest r;
  r.set_gpu("h100");
  r.mutable_gemm()->set_m(8192);
  r.mutable_gemm()->set_n(4096);
  r.mutable_gemm()->set_k(10922);
  crest::v1::LookupGemmResponse out;
  grpc::ClientContext context;
  return stub.LookupGemm(&context, r, &out).ok() && out.source() == crest::v1::SOURCE_MEASURED;
}

bool QueryDff(crest::v1::Crest::Stub& stub) {
  crest::v1::QueryDffRequest r;
  r.set_hidden(4096);
  r.set_gpu("h100");
  r.set_top(10);
  crest::v1::QueryDffResponse out;
  grpc::ClientContext context;
  return stub.QueryDff(&context, r, &out).ok() && out.measured() == 257;
}

struct Row {
  std::string method, sweep;
  int clients = 0;
  Result result;
};

// One daemon, one cache setting: every method, client count and sweep state.
bool RunAll(const char* crestd, const std::string& state, double seconds, bool cached,
            std::vector<Row>& rows) {
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
  int64_t job_id = 0;
  for (bool sweeping : {false, true}) {
    if (sweeping) {
      crest::v1::SubmitJobRequest submit;
      submit.mutable_spec()->set_json(
          R"({"version": 1, "gpu": "a100", "dff": [{"hidden": 16384, "window": 8192, "pass": "train"}]})");
      submit.set_force(true);
      crest::v1::SubmitJobResponse job;
      grpc::ClientContext context;
      const grpc::Status s = control->SubmitJob(&context, submit, &job);
      if (!s.ok()) {
        std::fprintf(stderr, "submit: %s\n", s.error_message().c_str());
        return false;
      }
      job_id = job.job().id();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    for (const char* method : {"LookupGemm", "QueryDff"}) {
      for (int clients : {1, 8, 64}) {
        const Result r = std::string(method) == "LookupGemm"
                             ? Load(address, clients, seconds, Lookup)
                             : Load(address, clients, seconds, QueryDff);
        rows.push_back({method, sweeping ? "writing" : "idle", clients, r});
        std::printf("%-6s %-10s %-7s %7d %12.0f %10.0f %10.0f %7lld\n", cached ? "on" : "off",
                    method, sweeping ? "writing" : "idle", clients, r.per_s, r.p50_us, r.p99_us,
                    static_cast<long long>(r.errors));
        std::fflush(stdout);
      }
    }
  }
  crest::v1::CancelJobRequest cancel;
  cancel.set_id(job_id);
  crest::v1::Job job;
  grpc::ClientContext context;
  if (control->CancelJob(&context, cancel, &job).ok()) {
    std::printf("the sweep wrote %lld of %lld predictions while the clients queried\n",
                static_cast<long long>(job.done()), static_cast<long long>(job.total()));
  }
  daemon.Stop(SIGTERM);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: crestd_load_bench CRESTD_BIN STATE_DIR [SECONDS_PER_RUN]\n");
    return 2;
  }
  const std::string state = argv[2];
  const double seconds = argc > 3 ? std::stod(argv[3]) : 3.0;
  std::printf("database in %s, %u hardware threads, %.0f s per run\n", state.c_str(),
              std::thread::hardware_concurrency(), seconds);
  std::printf("%-6s %-10s %-7s %7s %12s %10s %10s %7s\n", "cache", "method", "sweep", "clients",
              "calls/s", "p50_us", "p99_us", "errors");
  std::vector<Row> off, on;
  if (!RunAll(argv[1], state, seconds, /*cached=*/false, off)) return 1;
  if (!RunAll(argv[1], state, seconds, /*cached=*/true, on)) return 1;
  std::printf("\ncached vs uncached, side by side:\n%-10s %-7s %7s %12s %12s %7s %10s %10s\n",
              "method", "sweep", "clients", "off calls/s", "on calls/s", "ratio", "off p99",
              "on p99");
  for (size_t i = 0; i < off.size() && i < on.size(); ++i) {
    const Result& a = off[i].result;
    const Result& b = on[i].result;
    std::printf("%-10s %-7s %7d %12.0f %12.0f %6.1fx %10.0f %10.0f\n", off[i].method.c_str(),
                off[i].sweep.c_str(), off[i].clients, a.per_s, b.per_s,
                a.per_s > 0 ? b.per_s / a.per_s : 0, a.p99_us, b.p99_us);
  }
  return 0;
}
