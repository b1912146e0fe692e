// Fleet catalogue figures, measured side by side in one run on this machine:
//  1. `crest fleet pull` of NODES crestd on loopback, each serving a
//     database of the same GEMMs measured on its own (fake) H100: wall time,
//     bytes, rows merged per second; then the second pull, which adds nothing.
//  2. The h=4096 train d_ff ranking (1,542 GEMMs, all measured) from one
//     node's database and from the catalogue, where each GEMM is the median
//     of NODES devices: p50/p99 of each.
// The measurements are synthetic (no GPU): the figures are the tool's
// speed, not any GPU's.
//
// Usage: fleet_bench CRESTD_BIN CREST_BIN [NODES]   (default 4 nodes)
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_jobs.h"
#include "crest/answers/answers.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crestd_process.h"
#include "nlohmann/json.hpp"
#include "synthetic.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

crest::tuner::DffQuery TrainQuery(int64_t hidden) {
  crest::tuner::DffQuery q;
  q.dff.hidden = hidden;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  q.dff.window = 128;
  q.train = true;
  q.top = 10;
  return q;
}

// Runs `command`, its stdout into `out`; the wall time in seconds, or -1.
double Timed(const std::string& command, const std::string& out) {
  const auto start = Clock::now();
  const int rc = std::system((command + " > " + out + " 2>/dev/null").c_str());
  const double s = Seconds(start, Clock::now());
  return rc == 0 ? s : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fleet_bench CRESTD_BIN CREST_BIN [NODES]\n");
    return 2;
  }
  const std::string crestd = argv[1];
  const std::string crest = argv[2];
  const int nodes = argc > 3 ? std::atoi(argv[3]) : 4;
  char pattern[] = "/tmp/crest-fleet-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);

  // The GEMMs of three train d_ff windows (h = 4096, 5120, 8192).
  std::vector<crest::tuner::GemmShape> gemms;
  for (int64_t h : {4096, 5120, 8192}) {
    auto plan = crest::tuner::PlanDff(TrainQuery(h));
    if (!plan.ok()) return 1;
    for (const auto& mlp : plan->gemms) gemms.insert(gemms.end(), mlp.begin(), mlp.end());
  }
  std::printf(
      "fleet of %d nodes, each %zu GEMMs x 8 algorithms (synthetic, not measured), %u "
      "hardware threads\n",
      nodes, gemms.size(), std::thread::hardware_concurrency());

  const auto insert_start = Clock::now();
  std::vector<std::string> state_dirs;
  for (int i = 0; i < nodes; ++i) {
    const std::string state = dir + "/node" + std::to_string(i);
    std::filesystem::create_directories(state);
    state_dirs.push_back(state);
    crest::store::StoreOptions options;
    options.host = "bench-node-" + std::to_string(i);
    options.synchronous_full = false;
    auto db = crest::store::Store::Open(state + "/crest.db", options);
    if (!db.ok()) return 1;
    auto ids = (*db)->RegisterDevice(
        crest::bench::SyntheticH100("GPU-bench-" + std::to_string(i), options.host),
        {"580.159.04", 13000, 130100});
    if (!ids.ok()) return 1;
    // Each node's sweep is a job, as every sweep is; finished, its run is
    // packed, and the pull packs it in the catalogue.
    auto job = crest::bench::StartJob(**db, "{\"name\":\"fleet-bench\"}",
                                      "GPU-bench-" + std::to_string(i));
    if (!job.ok()) return 1;
    std::mt19937_64 rng(static_cast<uint64_t>(i));
    const double speed = 1.0 + 0.03 * i;
    for (const auto& g : gemms) {
      if (!(*db)
               ->InsertMeasurement(*job, ids->first, ids->second, "H100-SXM", 132,
                                   crest::bench::SyntheticMeasurement(g, rng, speed))
               .ok()) {
        return 1;
      }
    }
    if (!crest::bench::FinishJob(**db, *job, static_cast<int64_t>(gemms.size())).ok()) return 1;
  }
  std::printf("built %d node databases in %.1f s\n", nodes, Seconds(insert_start, Clock::now()));

  std::vector<std::unique_ptr<crest::testing::CrestdProcess>> daemons;
  std::string targets;
  for (const auto& state : state_dirs) {
    daemons.push_back(std::make_unique<crest::testing::CrestdProcess>());
    std::string why;
    if (!daemons.back()->Start(crestd, state, {"--log-level", "warn"}, &why)) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
    targets += (targets.empty() ? "" : ",") + daemons.back()->address();
  }

  const std::string catalogue = dir + "/catalogue.db";
  const std::string pull =
      crest + " --json fleet pull --targets " + targets + " --into " + catalogue;
  std::printf("\n%-12s %8s %12s %14s %14s\n", "pull", "wall_s", "MB", "rows_merged", "rows/s");
  for (const char* which : {"first", "second"}) {
    const std::string out = dir + "/pull.json";
    const double s = Timed(pull, out);
    if (s < 0) {
      std::fprintf(stderr, "crest fleet pull failed\n");
      return 1;
    }
    std::ifstream in(out);
    const auto report = nlohmann::json::parse(in, nullptr, false);
    int64_t bytes = 0;
    int64_t rows = 0;
    for (const auto& n : report["nodes"]) {
      bytes += n["bytes"].get<int64_t>();
      rows += n["merged"]["measurements"].get<int64_t>();
    }
    std::printf("%-12s %8.2f %12.1f %14lld %14.0f\n", which, s, static_cast<double>(bytes) / 1e6,
                static_cast<long long>(rows), static_cast<double>(rows) / s);
  }
  for (const auto& d : daemons) d->Stop(SIGTERM);

  // The same ranking from one node and from the catalogue, interleaved.
  crest::store::StoreOptions read_only;
  read_only.read_only = true;
  read_only.create = false;
  auto one = crest::store::Store::Open(state_dirs[0] + "/crest.db", read_only);
  auto all = crest::store::Store::Open(catalogue, read_only);
  if (!one.ok() || !all.ok()) return 1;
  const crest::tuner::GpuSpec& h100 = **crest::tuner::FindGpu("h100");
  std::vector<double> one_us;
  std::vector<double> all_us;
  std::string provenance;
  for (int i = 0; i < 200; ++i) {
    for (auto* db : {&*one, &*all}) {
      const auto start = Clock::now();
      auto r = crest::answers::StoreAnswers(**db, "bench", {})->Dff(TrainQuery(4096), h100);
      const double us = Seconds(start, Clock::now()) * 1e6;
      if (!r.ok() || r->measured != 257) return 1;
      (db == &*one ? one_us : all_us).push_back(us);
      if (db == &*all) provenance = r->rows.front().provenance;
    }
  }
  const crest::bench::Percentiles a = crest::bench::Summarize(one_us);
  const crest::bench::Percentiles b = crest::bench::Summarize(all_us);
  std::printf("\nh=4096 train d_ff ranking (257 candidates, 1,542 GEMMs, 200 runs each)\n");
  std::printf("%-22s %10s %10s\n", "database", "p50_us", "p99_us");
  std::printf("%-22s %10.0f %10.0f\n", "one node", a.p50_us, a.p99_us);
  std::printf("%-22s %10.0f %10.0f\n", "catalogue", b.p50_us, b.p99_us);
  std::printf("catalogue / one node: p50 %.2fx, p99 %.2fx\n", b.p50_us / a.p50_us,
              b.p99_us / a.p99_us);
  std::printf("catalogue answer: %s\n", provenance.c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
