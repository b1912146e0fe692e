// crestd under one greedy client (issue 40): the resident memory of a real
// crestd process, and another client's LookupGemm latency, while one client
//   1. holds 64 WatchJob streams it never reads, on a model job of 200,000
//      GEMMs with 256-byte names (the results a reader is owed);
//   2. queues 33 jobs of 200,000 GEMMs with 256-byte names;
//   3. asks one costly QueryDff (the train step, gate and up apart, at the
//      --max-query-gemms limit), then the audit's (±49,999: refused);
//   4. asks 200 of them at once, from one address;
//   5. asks small ones back to back (those crestd may compute on its
//      serving thread), one at a time.
// Each scenario runs its own crestd, so figures are side by side in one run.
// The audit's figures before the fix (another machine): 64 streams 323 MB
// → 3.52 GB; 33 queued jobs 170 MB → 2.4 GB; one query ~1 s CPU, +271 MB,
// an 11.8 MB answer; during 200, another client's lookup waited 120 s.
//
// Usage: crestd_hostile_bench CRESTD_BIN WORK_DIR
//   ONLY=costly|small|large|queued|streams runs that scenario alone.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "crest/v1/crest.grpc.pb.h"
#include "crestd_process.h"
#include "hostile_requests.h"
#include "percentiles.h"
#include "process_stats.h"

namespace {

using Clock = std::chrono::steady_clock;
using crest::testing::CrestdProcess;
namespace v1 = crest::v1;

// A memory field of crestd's /proc/PID/status in MB (VmRSS: now; VmHWM: the peak).
double StatusMb(pid_t pid, const std::string& field) {
  return static_cast<double>(crest::bench::StatusKib(pid, field)) / 1024;
}

std::unique_ptr<grpc::ClientContext> Context(double seconds = 60) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  return c;
}

// 200,000 GEMMs, each named with 256 bytes; `k` tells jobs apart.
std::string BigNamedSpec(int k) { return crest::testing::NamedGemmsSpec(400, 500, k); }

bool StartCrestd(CrestdProcess& d, const std::string& bin, const std::string& dir,
                 std::vector<std::string> args) {
  std::filesystem::create_directories(dir);
  std::string why;
  if (!d.Start(bin, dir, args, &why)) {
    std::fprintf(stderr, "crestd did not start: %s\n", why.c_str());
    return false;
  }
  return true;
}

int64_t SubmitSpec(v1::Crest::Stub& stub, const std::string& spec) {
  v1::SubmitJobRequest r;
  r.mutable_spec()->set_json(spec);
  v1::SubmitJobResponse out;
  const grpc::Status s = stub.SubmitJob(Context().get(), r, &out);
  if (!s.ok()) std::fprintf(stderr, "submit: %s\n", s.error_message().c_str());
  return s.ok() ? out.job().id() : 0;
}

// `streams` never-read streams (0: the job alone, the baseline).
void NeverReadStreams(const std::string& bin, const std::string& work, int streams,
                      int per_caller) {
  CrestdProcess d;
  if (!StartCrestd(d, bin,
                   work + "/streams-" + std::to_string(streams) + "-" + std::to_string(per_caller),
                   {"--max-streams-per-caller", std::to_string(per_caller)})) {
    return;
  }
  auto stub = d.Stub();
  const double before = StatusMb(d.pid(), "VmRSS");
  const int64_t job = SubmitSpec(*stub, BigNamedSpec(64));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::JobEvent>>> readers;
  int open = 0;
  for (int i = 0; i < streams; ++i) {
    contexts.push_back(Context(120));
    v1::WatchJobRequest w;
    w.set_id(job);
    readers.push_back(stub->WatchJob(contexts.back().get(), w));
    v1::JobEvent first;
    if (readers.back()->Read(&first)) ++open;  // then never again
  }
  double peak = 0;
  for (int i = 0; i < 50; ++i) {  // 25 s: before the 30 s write watchdog
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    peak = std::max(peak, StatusMb(d.pid(), "VmRSS"));
  }
  v1::GetJobRequest g;
  g.set_id(job);
  v1::Job j;
  (void)stub->GetJob(Context().get(), g, &j);
  std::printf(
      "  %d never-read streams (--max-streams-per-caller %d): %d opened; the job wrote "
      "%lld of %lld GEMMs in 25 s; RSS %.0f MB before, peak %.0f MB\n",
      streams, per_caller, open, static_cast<long long>(j.done()),
      static_cast<long long>(j.total()), before, peak);
  for (auto& c : contexts) c->TryCancel();
  for (auto& r : readers) (void)r->Finish();
}

void QueuedJobs(const std::string& bin, const std::string& work) {
  CrestdProcess d;
  if (!StartCrestd(d, bin, work + "/queued", {"--max-queued-per-client", "64"})) return;
  auto stub = d.Stub();
  SubmitSpec(*stub, BigNamedSpec(64));  // runs (~40 s) while the others queue
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double before = StatusMb(d.pid(), "VmRSS");
  int queued = 0;
  for (int i = 0; i < 33; ++i) queued += SubmitSpec(*stub, BigNamedSpec(100 + i)) != 0 ? 1 : 0;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::printf(
      "  33 jobs of 200,000 named GEMMs queued behind one running: %d queued; RSS %.0f "
      "MB before, %.0f MB after (peak %.0f MB)\n",
      queued, before, StatusMb(d.pid(), "VmRSS"), StatusMb(d.pid(), "VmHWM"));
}

v1::LookupGemmRequest Lookup() {
  v1::LookupGemmRequest r;
  r.set_gpu("h100");
  r.mutable_gemm()->set_m(4096);
  r.mutable_gemm()->set_n(4096);
  r.mutable_gemm()->set_k(4096);
  return r;
}

// Another client's LookupGemm latencies [ms] until `stop`.
std::vector<double> LookupLatencies(const CrestdProcess& d, const std::atomic<bool>& stop) {
  auto stub = v1::Crest::NewStub(
      grpc::CreateCustomChannel(d.address(), grpc::InsecureChannelCredentials(), [] {
        grpc::ChannelArguments a;
        a.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection of its own
        return a;
      }()));
  std::vector<double> ms;
  while (!stop.load()) {
    const auto t = Clock::now();
    v1::LookupGemmResponse out;
    (void)stub->LookupGemm(Context(200).get(), Lookup(), &out);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ms;
}

// Another client's LookupGemm latencies [ms] while `work` runs.
template <typename Work>
std::vector<double> LookupsWhile(const CrestdProcess& d, Work work) {
  std::atomic<bool> stop{false};
  std::vector<double> ms;
  std::thread lookups([&] { ms = LookupLatencies(d, stop); });
  work();
  stop = true;
  lookups.join();
  return ms;
}

// Another client's LookupGemm latencies [ms] over 2 s of nothing else.
std::vector<double> IdleLookups(const CrestdProcess& d) {
  return LookupsWhile(d, [] { std::this_thread::sleep_for(std::chrono::seconds(2)); });
}

std::string Percentiles(const std::vector<double>& ms) {
  if (ms.empty()) return "none";
  const crest::bench::Percentiles p = crest::bench::Summarize(ms);  // here in ms
  char text[160];
  std::snprintf(text, sizeof text, "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%zu lookups)", p.p50_us,
                p.p99_us, p.max_us, ms.size());
  return text;
}

void CostlyQueries(const std::string& bin, const std::string& work) {
  CrestdProcess d;
  if (!StartCrestd(d, bin, work + "/costly", {})) return;
  auto stub = d.Stub();
  constexpr int64_t kWindow = 2777;  // 5,555 candidates × 9 GEMMs: at the 50,000 limit
  v1::QueryDffResponse out;
  grpc::Status refused =
      stub->QueryDff(Context().get(), crest::testing::CostlyDffQuery(49'999), &out);
  std::printf("  the audit's query (±49,999): %s: %s\n", refused.ok() ? "answered" : "refused",
              refused.error_message().c_str());
  const double rss0 = StatusMb(d.pid(), "VmRSS"), cpu0 = crest::bench::ProcessCpuSeconds(d.pid());
  const auto t0 = Clock::now();
  const grpc::Status one =
      stub->QueryDff(Context().get(), crest::testing::CostlyDffQuery(kWindow), &out);
  std::printf(
      "  one query at the limit (±%lld, train, gate/up apart): %s, %.0f ms wall, "
      "%.2f s crestd CPU, %zu-byte answer (every row), RSS %.0f -> %.0f MB\n",
      static_cast<long long>(kWindow), one.ok() ? "OK" : one.error_message().c_str(),
      std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
      crest::bench::ProcessCpuSeconds(d.pid()) - cpu0, out.ByteSizeLong(), rss0,
      StatusMb(d.pid(), "VmRSS"));

  const std::vector<double> idle = IdleLookups(d);
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0, ok = 0, exhausted = 0;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::QueryDffResponse> answers(200);
  // Each query its own (M differs), so none is answered from the cache.
  std::vector<v1::QueryDffRequest> queries(200, crest::testing::CostlyDffQuery(kWindow));
  for (int i = 0; i < 200; ++i) queries[static_cast<size_t>(i)].set_tokens(8192 + i);
  const double cpu1 = crest::bench::ProcessCpuSeconds(d.pid());
  double burst_s = 0;
  const std::vector<double> during = LookupsWhile(d, [&] {
    const auto t1 = Clock::now();
    for (int i = 0; i < 200; ++i) {
      contexts.push_back(Context(200));
      const auto at = static_cast<size_t>(i);
      stub->async()->QueryDff(contexts.back().get(), &queries[at], &answers[at],
                              [&](grpc::Status s) {
                                std::lock_guard<std::mutex> lock(mu);
                                ++finished;
                                ok += s.ok() ? 1 : 0;
                                exhausted += s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
                                cv.notify_all();
                              });
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return finished == 200; });
    }
    burst_s = std::chrono::duration<double>(Clock::now() - t1).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  std::printf(
      "  200 such queries at once from one address: %d answered, %d refused "
      "RESOURCE_EXHAUSTED (--answers-per-caller 64), all done in %.2f s, %.2f s crestd "
      "CPU; peak RSS %.0f MB\n",
      ok, exhausted, burst_s, crest::bench::ProcessCpuSeconds(d.pid()) - cpu1,
      StatusMb(d.pid(), "VmHWM"));
  std::printf("  another client's LookupGemm: idle %s; during the burst %s\n",
              Percentiles(idle).c_str(), Percentiles(during).c_str());
}

// One client's small QueryDffs back to back, each its own (so none is
// cached): the largest that crestd computes on gRPC's serving thread while
// nothing else runs (the default window of the train step with gate and up
// apart, 2,313 GEMMs, predicted: the database is empty). What another
// client's LookupGemm waits meanwhile, and crestd's CPU a query.
void SmallQueries(const std::string& bin, const std::string& work) {
  CrestdProcess d;
  if (!StartCrestd(d, bin, work + "/small", {"--answer-cache", "0"})) return;
  auto stub = d.Stub();
  const std::vector<double> idle = IdleLookups(d);
  v1::QueryDffRequest q = crest::testing::CostlyDffQuery(128);
  v1::QueryDffResponse out;
  int answered = 0, failed = 0;
  const double cpu0 = crest::bench::ProcessCpuSeconds(d.pid());
  const std::vector<double> during = LookupsWhile(d, [&] {
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < std::chrono::seconds(3)) {
      q.set_tokens(8192 + answered + failed);
      (stub->QueryDff(Context().get(), q, &out).ok() ? answered : failed) += 1;
    }
  });
  const double cpu_s = crest::bench::ProcessCpuSeconds(d.pid()) - cpu0;
  std::printf(
      "  small queries back to back from one client (+-128, train, gate/up apart: 2,313 GEMMs, "
      "predicted): %d answered, %d failed in 3 s, %.2f ms crestd CPU a query (the lookups' "
      "included)\n",
      answered, failed, answered > 0 ? 1e3 * cpu_s / answered : 0.0);
  std::printf("  another client's LookupGemm: idle %s; during the queries %s\n",
              Percentiles(idle).c_str(), Percentiles(during).c_str());
}

}  // namespace

// 200 Compare requests of ~4 MiB each (a spec the limit allows), sent at
// once from one address: what crestd holds while it receives and answers.
void LargeRequests(const std::string& bin, const std::string& work) {
  CrestdProcess d;
  if (!StartCrestd(d, bin, work + "/large", {})) return;
  auto stub = d.Stub();
  v1::CompareRequest request;
  request.set_base_selector("job:1");
  request.set_new_selector("job:2");
  request.set_spec_json(std::string((4 << 20) - 1024, ' '));  // whitespace: not a spec
  const double before = StatusMb(d.pid(), "VmRSS");
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0, ok = 0, exhausted = 0, other = 0;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::CompareResponse> answers(200);
  for (size_t i = 0; i < 200; ++i) {
    contexts.push_back(Context(120));
    stub->async()->Compare(contexts.back().get(), &request, &answers[i], [&](grpc::Status s) {
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      ok += s.ok() ? 1 : 0;
      exhausted += s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? 1 : 0;
      other += !s.ok() && s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED ? 1 : 0;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return finished == 200; });
  }
  std::printf(
      "  200 Compare requests of 4 MiB at once: %d answered, %d refused RESOURCE_EXHAUSTED, "
      "%d other errors (the spec is not JSON); RSS %.0f MB before, peak %.0f MB\n",
      ok, exhausted, other, before, StatusMb(d.pid(), "VmHWM"));
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CRESTD_BIN WORK_DIR\n", argv[0]);
    return 2;
  }
  const std::string bin = argv[1], work = argv[2];
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // nothing buffered when crestd forks
  std::printf("crestd under one greedy client (each scenario its own crestd; RSS of crestd)\n");
  // ONLY=costly|small|large|queued|streams runs that scenario alone.
  const char* only_env = std::getenv("ONLY");
  const std::string only = only_env != nullptr ? only_env : "";
  const auto run = [&](const char* name) { return only.empty() || only == name; };
  if (run("costly")) CostlyQueries(bin, work);
  if (run("small")) SmallQueries(bin, work);
  if (run("large")) LargeRequests(bin, work);
  if (run("queued")) QueuedJobs(bin, work);
  if (run("streams")) {
    NeverReadStreams(bin, work, 0, 8);
    NeverReadStreams(bin, work, 64, 8);
    NeverReadStreams(bin, work, 64, 64);
  }
  return 0;
}
