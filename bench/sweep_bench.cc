// Model-backend sweeps: GEMMs per second into a fresh database, with the
// default batched commits beside one transaction per GEMM (the way every
// sweep committed before), in one run. The store syncs each commit (FULL,
// the default). Target (issue 39): >= 20,000 GEMMs/s batched.
//
// Usage: sweep_bench [WINDOW]   (the d_ff window at h=4096, train: 12 GEMMs a
//        candidate; default 1024, about 12,000 GEMMs)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "crest/common/str_cat.h"
#include "crest/store/store.h"
#include "crest/sweep/runner.h"
#include "crest/sweep/spec.h"
#include "crest/tuner/backend.h"
#include "crest/tuner/gpu_catalogue.h"
#include "process_stats.h"

namespace {

struct Figures {
  double gemms_per_s = 0;
  double cpu_us_per_gemm = 0;
  int64_t gemms = 0;
};

// One sweep of `spec` into a new database in `dir`, `batch` GEMMs a commit.
Figures Sweep(const crest::sweep::SweepSpec& spec, const std::string& dir, int batch) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  crest::store::StoreOptions options;
  options.host = "bench";
  auto db = crest::store::Store::Open(dir + "/sweep.db", options);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  auto backend = crest::tuner::MakeModelBackend(**crest::tuner::FindGpu("h100"));
  crest::sweep::SweepOptions run;
  run.prediction_batch = batch;
  const double cpu = crest::bench::ProcessCpuSeconds(getpid());
  const auto start = std::chrono::steady_clock::now();
  auto out = crest::sweep::RunSweep(spec, *backend, **db, run);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!out.ok() || out->job.state != crest::store::JobState::kDone) {
    std::fprintf(stderr, "sweep failed: %s\n",
                 out.ok() ? "not done" : out.status().ToString().c_str());
    std::exit(1);
  }
  Figures f;
  f.gemms = out->progress.new_results;
  f.gemms_per_s = static_cast<double>(f.gemms) / s;
  f.cpu_us_per_gemm =
      (crest::bench::ProcessCpuSeconds(getpid()) - cpu) / static_cast<double>(f.gemms) * 1e6;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int window = argc > 1 ? std::atoi(argv[1]) : 1024;
  auto spec = crest::sweep::ParseSweepSpec(crest::StrCat(
      R"({"gpu": "h100", "dff": [{"hidden": 4096, "window": )", window, R"(, "pass": "train"}]})"));
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 2;
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("crest-sweep-bench-" + std::to_string(getpid())))
          .string();
  const Figures one = Sweep(*spec, dir, 1);
  const Figures batched = Sweep(*spec, dir, crest::sweep::SweepOptions{}.prediction_batch);
  std::filesystem::remove_all(dir);
  std::printf("model-backend sweep, h=4096 window %d train, %lld GEMMs, synchronous=FULL\n", window,
              static_cast<long long>(batched.gemms));
  std::printf("%-34s %12s %10s %14s\n", "commits", "GEMMs/s", "ratio", "cpu_us/GEMM");
  std::printf("%-34s %12.0f %10.2f %14.1f\n", "one per GEMM (before)", one.gemms_per_s, 1.0,
              one.cpu_us_per_gemm);
  std::printf("%-34s %12.0f %10.2f %14.1f  [target >= 20000 GEMMs/s: %s]\n",
              crest::StrCat("batched (", crest::sweep::SweepOptions{}.prediction_batch,
                            " a commit, default)")
                  .c_str(),
              batched.gemms_per_s, batched.gemms_per_s / one.gemms_per_s, batched.cpu_us_per_gemm,
              batched.gemms_per_s >= 20000 ? "met" : "MISSED");
  return 0;
}
