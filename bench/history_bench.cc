// What a window's history costs an answer: the h = 4096 train d_ff window
// (257 candidates) measured by 1, 4, 16 and 64 runs (one finished job each, one
// device, one software version, as a nightly job re-sweeping it), then
// ranked from the store in process with --runs latest and --runs all.
// Targets (issue 39): latest flat (16 runs <= 1.5x 1 run); all linear
// (the cost per run does not grow with the runs).
//
// Usage: history_bench [RUNS...]   (default: 1 4 16 64)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench_jobs.h"
#include "crest/answers/answers.h"
#include "crest/store/store.h"
#include "crest/tuner/dff_ranking.h"
#include "percentiles.h"
#include "synthetic.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<crest::tuner::GemmShape> WindowGemms(const crest::tuner::DffQuery& q) {
  std::vector<crest::tuner::GemmShape> gemms;
  auto c = crest::tuner::GenerateDffCandidates(q.dff);
  for (int64_t f : c->values) {
    auto mlp = crest::tuner::DffCandidateGemms(q, f);
    gemms.insert(gemms.end(), mlp->begin(), mlp->end());
  }
  return gemms;
}

// A database holding `runs` jobs, each of which measured every GEMM.
bool Fill(const std::string& path, int runs, const std::vector<crest::tuner::GemmShape>& gemms) {
  crest::store::StoreOptions bulk;
  bulk.synchronous_full = false;
  bulk.host = "bench";
  auto db = crest::store::Store::Open(path, bulk);
  if (!db.ok()) return false;
  const crest::tuner::DeviceInfo dev = crest::bench::SyntheticH100("GPU-node-a", "node-a");
  auto ids = (*db)->RegisterDevice(dev, {"580.159.04", 13000, 130100});
  if (!ids.ok()) return false;
  std::mt19937_64 rng(7);
  for (int r = 0; r < runs; ++r) {
    auto job = crest::bench::StartJob(
        **db, "{\"name\":\"nightly\",\"run\":" + std::to_string(r) + "}", dev.uuid);
    if (!job.ok()) return false;
    for (const auto& g : gemms) {
      auto s = (*db)->InsertMeasurement(*job, ids->first, ids->second, "H100-SXM", 132,
                                        crest::bench::SyntheticMeasurement(g, rng));
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return false;
      }
    }
    // Each night's job finishes, which packs its run.
    auto s = crest::bench::FinishJob(**db, *job, static_cast<int64_t>(gemms.size()));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return false;
    }
  }
  return true;
}

// p50 of a ranking from a fresh answerer each time (no answer cache).
double RankingP50Us(const std::string& path, const crest::tuner::DffQuery& q,
                    crest::answers::RunChoice runs) {
  crest::store::StoreOptions ro;
  ro.read_only = true;
  auto db = crest::store::Store::Open(path, ro);
  const crest::tuner::GpuSpec& h100 = **crest::tuner::FindGpu("h100");
  crest::answers::AnswerOptions options;
  options.runs = runs;
  const auto answers = crest::answers::StoreAnswers(**db, path, options);
  std::vector<double> us;
  for (int i = 0; i < 40; ++i) {
    const auto start = Clock::now();
    auto r = answers->Dff(q, h100);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!r.ok() || r->measured == 0) {
      std::fprintf(stderr, "ranking not measured\n");
      std::exit(1);
    }
  }
  return crest::bench::Summarize(us).p50_us;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {1, 4, 16, 64};
  crest::tuner::DffQuery q;
  q.dff.hidden = 4096;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  q.train = true;
  const auto gemms = WindowGemms(q);
  char pattern[] = "/tmp/crest-history-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  std::printf("h=4096 train window: %zu GEMMs per run; ranking p50 of 40, in process\n",
              gemms.size());
  std::printf("%6s  %12s  %8s  %12s  %8s  %14s\n", "runs", "latest_us", "x_1run", "all_us",
              "x_1run", "all_us_per_run");
  double latest_1 = 0;
  double all_1 = 0;
  for (int runs : counts) {
    const std::string path = dir + "/runs-" + std::to_string(runs) + ".db";
    if (!Fill(path, runs, gemms)) return 1;
    const double latest = RankingP50Us(path, q, crest::answers::RunChoice::kLatest);
    const double all = RankingP50Us(path, q, crest::answers::RunChoice::kAll);
    if (latest_1 == 0) {
      latest_1 = latest;
      all_1 = all;
    }
    std::printf("%6d  %12.0f  %8.2f  %12.0f  %8.2f  %14.0f\n", runs, latest, latest / latest_1, all,
                all / all_1, all / runs);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
