// Result-store performance on a database of >= 1,000,000 measurement rows:
// insert rate, single-GEMM lookup latency and whole d_ff ranking latency
// (p50/p99), measured in one run, beside the raw SQLite read of as many
// rows as a ranking reads (the floor under it). Targets (issue 3): lookup
// p99 < 100 µs, ranking < 2 ms; (issue 39) train ranking p50 <= 1 ms.
//
// Usage: store_bench [--keep DIR]   (default: a temporary directory, removed)
//        With --keep, a database already in DIR is reused (no insert figures).
//        ONLY=lookup|fwd|train runs that part alone, REPEAT=N times its count
//        (for a profiler: perf record -g -- env ONLY=train REPEAT=10 ...).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
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
#include "synthetic.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The baseline: `rows` rows of run_bests (the figures a ranking reads of
// each GEMM) read by the SQLite C API in one scan, nothing else; p50 [us].
double RawScanP50Us(const std::string& path, int rows) {
  sqlite3* db = nullptr;
  // Without the connection's mutex, as Crest opens its connections.
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT k, measurement_id, median_us, ci_low_us, ci_high_us FROM run_bests "
                     "LIMIT ?1",
                     -1, &stmt, nullptr);
  std::vector<double> us;
  for (int i = 0; i < 300; ++i) {
    const auto start = Clock::now();
    sqlite3_bind_int(stmt, 1, rows);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      for (int column = 0; column < 5; ++column) (void)sqlite3_column_double(stmt, column);
    }
    sqlite3_reset(stmt);
    us.push_back(Seconds(start, Clock::now()) * 1e6);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return crest::bench::Summarize(us).p50_us;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool keep = false;
  if (argc == 3 && std::string(argv[1]) == "--keep") {
    dir = argv[2];
    keep = true;
    std::filesystem::create_directories(dir);
  } else {
    char pattern[] = "/tmp/crest-store-bench-XXXXXX";
    dir = mkdtemp(pattern);
  }
  const std::string path = dir + "/bench.db";
  const bool reuse = keep && std::filesystem::exists(path);
  if (!reuse) std::filesystem::remove(path);

  // The plan: d_ff windows (±128, train) for 15 hidden sizes.
  std::vector<crest::tuner::GemmShape> gemms;
  crest::tuner::DffQuery q;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  q.train = true;
  for (int64_t h = 2048; h <= 16384; h += 1024) {
    q.dff.hidden = h;
    auto c = crest::tuner::GenerateDffCandidates(q.dff);
    for (int64_t f : c->values) {
      auto mlp = crest::tuner::DffCandidateGemms(q, f);
      if (!mlp.ok()) return 1;
      gemms.insert(gemms.end(), mlp->begin(), mlp->end());
    }
  }

  crest::store::StoreOptions bulk;
  bulk.synchronous_full = false;
  bulk.host = "bench";
  std::mt19937_64 rng(7);
  int64_t rows = 0;
  double insert_s = 0;
  std::vector<double> finish_ms;  // marking each job done, which packs its run
  if (!reuse) {
    auto db = crest::store::Store::Open(path, bulk);
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", std::string(db.status().message()).c_str());
      return 1;
    }
    const auto start = Clock::now();
    // Each node's sweep under each cuBLASLt is a job, as every sweep is
    // (sweep/runner.cc): finished, it is packed by line (store/src/run_packs.h).
    for (const char* uuid : {"GPU-node-a", "GPU-node-b"}) {
      for (int64_t cublaslt : {120900, 130000, 130100}) {
        auto ids = (*db)->RegisterDevice(crest::bench::SyntheticH100(uuid, uuid),
                                         {"580.159.04", 13000, cublaslt});
        auto job = crest::bench::StartJob(
            **db, "{\"name\":\"bench\",\"cublaslt\":" + std::to_string(cublaslt) + "}", uuid);
        if (!ids.ok() || !job.ok()) return 1;
        for (const auto& g : gemms) {
          auto s = (*db)->InsertMeasurement(*job, ids->first, ids->second, "H100-SXM", 132,
                                            crest::bench::SyntheticMeasurement(g, rng));
          if (!s.ok()) {
            std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
            return 1;
          }
          rows += 8;
        }
        const auto finishing = Clock::now();
        if (auto s = crest::bench::FinishJob(**db, *job, static_cast<int64_t>(gemms.size()));
            !s.ok()) {
          std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
          return 1;
        }
        finish_ms.push_back(Seconds(finishing, Clock::now()) * 1e3);
      }
    }
    insert_s = Seconds(start, Clock::now());
  }
  std::printf(
      "database: %s, %lld measurement rows (%zu GEMMs x 8 algorithms x 3 cuBLASLt x 2 nodes)\n",
      path.c_str(), static_cast<long long>(rows), gemms.size());
  if (!reuse) {
    std::printf("insert (synchronous=NORMAL, 8 rows per transaction): %.0f rows/s, %.0f GEMMs/s\n",
                static_cast<double>(rows) / insert_s, static_cast<double>(rows) / 8 / insert_s);
    std::sort(finish_ms.begin(), finish_ms.end());
    std::printf(
        "finishing a job (marking it done, which packs its run of %zu GEMMs): %.0f-%.0f ms, of "
        "the insert's %.0f s\n",
        gemms.size(), finish_ms.front(), finish_ms.back(), insert_s);
  }
  if (!reuse) {
    crest::store::StoreOptions full;
    full.host = "bench";
    auto db = crest::store::Store::Open(path, full);
    auto ids = (*db)->RegisterDevice(crest::bench::SyntheticH100("GPU-node-c"),
                                     {"580.159.04", 13000, 130100});
    const int n = 500;
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      (void)(*db)->InsertMeasurement(
          std::nullopt, ids->first, ids->second, "H100-SXM", 132,
          crest::bench::SyntheticMeasurement(gemms[static_cast<size_t>(i)], rng));
    }
    const double s = Seconds(start, Clock::now());
    std::printf(
        "insert (synchronous=FULL, the default; fsync per GEMM): %.0f rows/s, %.0f GEMMs/s\n",
        8.0 * n / s, n / s);
  }

  crest::store::StoreOptions ro;
  ro.read_only = true;
  auto db = crest::store::Store::Open(path, ro);
  if (!db.ok()) {  // e.g. a kept database of an older schema: upgrade it first
    std::fprintf(stderr, "%s\n", std::string(db.status().message()).c_str());
    return 1;
  }
  const crest::tuner::GpuSpec& h100 = **crest::tuner::FindGpu("h100");
  const auto answers = crest::answers::StoreAnswers(**db, path, {});
  const char* only_env = std::getenv("ONLY");
  const std::string only = only_env != nullptr ? only_env : "";
  const char* repeat_env = std::getenv("REPEAT");
  const int repeat = std::max(1, repeat_env != nullptr ? std::atoi(repeat_env) : 1);
  const auto runs = [&](const char* part) { return only.empty() || only == part; };
  std::vector<double> lookup_us;
  std::uniform_int_distribution<size_t> pick(0, gemms.size() - 1);
  for (int i = 0; runs("lookup") && i < 20000 * repeat; ++i) {
    const auto& g = gemms[pick(rng)];
    const auto start = Clock::now();
    auto answer = answers->Lookup(g, h100);
    const auto end = Clock::now();
    if (!answer.ok() || !answer->measured) {
      std::fprintf(stderr, "lookup missed\n");
      return 1;
    }
    lookup_us.push_back(Seconds(start, end) * 1e6);
  }
  if (runs("lookup")) {
    const crest::bench::Percentiles lookup = crest::bench::Summarize(lookup_us);
    std::printf(
        "single-GEMM lookup (the latest run's best verified algorithm), 20000 lookups: "
        "p50 %.1f us, p99 %.1f us, max %.1f us  [target p99 < 100 us: %s]\n",
        lookup.p50_us, lookup.p99_us, lookup.max_us, lookup.p99_us < 100 ? "met" : "MISSED");
  }

  for (bool train : {false, true}) {
    if (!runs(train ? "train" : "fwd")) continue;
    std::vector<double> rank_us;
    crest::tuner::DffQuery dq;
    dq.dff.hidden = 4096;
    dq.dff.ratio = *crest::tuner::ParseRatio("8/3");
    dq.train = train;
    for (int i = 0; i < 300 * repeat; ++i) {
      const auto start = Clock::now();
      auto r = answers->Dff(dq, h100);
      const auto end = Clock::now();
      if (!r.ok() || r->measured != 257) {
        std::fprintf(stderr, "ranking incomplete\n");
        return 1;
      }
      rank_us.push_back(Seconds(start, end) * 1e6);
    }
    const crest::bench::Percentiles rank = crest::bench::Summarize(rank_us);
    const int ranked = train ? 257 * 6 : 257 * 2;
    const double raw = RawScanP50Us(path, ranked);
    std::printf(
        "d_ff ranking h=4096 %s (257 candidates, %d GEMMs), 300 rankings: p50 %.0f us, "
        "p99 %.0f us  [target p99 < 2000 us: %s%s]\n"
        "  baseline, raw SQLite scan of %d run_bests rows: p50 %.0f us; the ranking %.1fx it\n",
        train ? "train" : "fwd", ranked, rank.p50_us, rank.p99_us,
        rank.p99_us < 2000 ? "met" : "MISSED",
        train ? (rank.p50_us <= 1000 ? "; p50 <= 1000 us: met" : "; p50 <= 1000 us: MISSED") : "",
        ranked, raw, rank.p50_us / raw);
  }
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}
