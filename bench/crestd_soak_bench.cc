// crestd soaked in hostile traffic: the request fuzzer of the test suite
// (random bytes, mutated valid requests, every method) from several clients
// for >= 1,000,000 requests against a crestd process, reporting its resident
// memory (VmRSS) at the start and every 100,000 requests (each tenth of a
// shorter run), and the answers' codes.
// RSS must level off: what grows with the count of requests is a leak. The
// heap columns (crestd's crest_heap_bytes gauge, every 10 s) tell memory in
// use from memory the allocator keeps after it was freed.
//
// Usage: crestd_soak_bench CRESTD_BIN [REQUESTS] [CLIENTS] [CRESTD FLAGS...]
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crestd_process.h"
#include "process_stats.h"
#include "request_fuzzer.h"

namespace {

// The process's resident memory [KiB], from /proc: all of it, and the part
// that is its own (heap, stacks: RssAnon) rather than mapped files (the
// database, mmapped by SQLite: RssFile).
struct Rss {
  long total = -1, anon = -1, file = -1;
};

Rss RssOf(pid_t pid) {
  return {crest::bench::StatusKib(pid, "VmRSS"), crest::bench::StatusKib(pid, "RssAnon"),
          crest::bench::StatusKib(pid, "RssFile")};
}

// crestd's crest_heap_bytes{state=...} [KiB] from its /metrics (refreshed
// every 10 s); -1 when not there.
long HeapKib(int metrics_port, const std::string& state) {
  const std::string text = crest::testing::HttpGet(metrics_port, "/metrics");
  const std::string name = "crest_heap_bytes{state=\"" + state + "\"} ";
  const size_t at = text.find(name);
  if (at == std::string::npos) return -1;
  return static_cast<long>(std::atof(text.c_str() + at + name.size()) / 1024);
}

void PrintRow(int64_t n, pid_t pid, int metrics_port, const std::string& db, const char* rate) {
  const Rss r = RssOf(pid);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(db, ec);
  std::printf("%10lld %10ld %10ld %10ld %12ld %12ld %10lld %12s\n", static_cast<long long>(n),
              r.total, r.anon, r.file, HeapKib(metrics_port, "in_use"),
              HeapKib(metrics_port, "free"), ec ? -1LL : static_cast<long long>(bytes >> 10), rate);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crestd_soak_bench CRESTD_BIN [REQUESTS] [CLIENTS]\n");
    return 2;
  }
  const int64_t total = argc > 2 ? std::atoll(argv[2]) : 1'000'000;
  const int clients = argc > 3 ? std::atoi(argv[3]) : 4;
  char dir_template[] = "/tmp/crest-soak-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  crest::testing::CrestdProcess daemon;
  std::string why;
  std::fflush(stdout);
  const std::string port_file = std::string(dir_template) + "/metrics-port";
  std::vector<std::string> flags = {
      "--log-level", "error", "--metrics-listen", "127.0.0.1:0", "--metrics-port-file", port_file};
  for (int i = 4; i < argc; ++i) flags.emplace_back(argv[i]);
  if (!daemon.Start(argv[1], dir_template, flags, &why)) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  int metrics_port = -1;
  for (int i = 0; i < 500 && metrics_port <= 0; ++i) {
    std::ifstream(port_file) >> metrics_port;
    if (metrics_port <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("crestd pid %d, %lld fuzzed requests from %d clients\n", daemon.pid(),
              static_cast<long long>(total), clients);
  const std::string db = std::string(dir_template) + "/crest.db";
  std::printf("%10s %10s %10s %10s %12s %12s %10s %12s\n", "requests", "rss_kib", "anon_kib",
              "file_kib", "heap_use_kib", "heap_free_kib", "db_kib", "requests/s");
  const auto start = std::chrono::steady_clock::now();
  PrintRow(0, daemon.pid(), metrics_port, db, "-");
  std::atomic<int64_t> sent{0};
  std::mutex mu;
  std::vector<crest::testing::FuzzAnswer> unusual;  // neither OK nor a client's mistake
  std::vector<crest::testing::FuzzAnswer> all_codes;
  // A row every 100,000 requests (every tenth of a shorter run).
  const int64_t every = total >= 1'000'000 ? 100'000 : std::max<int64_t>(1, total / 10);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      crest::testing::RequestFuzzer fuzzer(daemon.Channel(), 1000u + static_cast<uint64_t>(c));
      std::vector<crest::testing::FuzzAnswer> mine;
      while (true) {
        const int64_t n = sent.fetch_add(1) + 1;
        if (n > total) break;
        auto answer = fuzzer.SendOne();
        answer.message.clear();  // keep memory flat here: only the codes are counted
        mine.push_back(std::move(answer));
        if (n % every == 0) {
          const double s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          std::lock_guard<std::mutex> lock(mu);
          char rate[32];
          std::snprintf(rate, sizeof rate, "%.0f", static_cast<double>(n) / s);
          PrintRow(n, daemon.pid(), metrics_port, db, rate);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      all_codes.insert(all_codes.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  std::printf("answers: %s\n", crest::testing::CountCodes(all_codes).c_str());
  const grpc::Status alive =
      crest::testing::RequestFuzzer::Send(*daemon.Channel(), "GetNodeInfo", false, "", 10);
  std::printf("still serving: %s\n", alive.ok() ? "yes" : alive.error_message().c_str());
  daemon.Stop(SIGTERM);
  std::filesystem::remove_all(dir_template);
  return alive.ok() ? 0 : 1;
}
