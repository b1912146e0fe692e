// The adaptive plan (tuner/adaptive_plan.h) against full sweeps, replayed
// from recorded tables of whole d_ff windows: for each table and seed, every
// GEMM the plan asks for is "timed" as the table's time × (1 + N(0, noise))
// (a harsher draw than the replay backend's median of noisy launches), until
// the plan is decided; a full sweep draws every GEMM the same way. Prints
// the GEMMs the plan timed (share of the window's), its rounds, and the
// regret of each sweep's measured leader: the table's time of the leader
// over the table's best candidate, - 1. Replayed figures, not a GPU's; the
// model in force is named (the shipped H100 calibration was fitted to
// Crest's runs of these windows: pass --calibration FILE for one fitted
// without them, e.g. from bench/predictor_holdout.sh with CREST_KEEP_WORK).
// Usage: adaptive_bench HIDDEN=TABLE.csv... [--seeds N] [--noise F]
//        [--calibration FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "crest/store/timing_csv.h"
#include "crest/tuner/adaptive_plan.h"
#include "crest/tuner/calibration.h"

namespace {

using crest::store::GemmKey;
using crest::tuner::AdaptivePlan;
using crest::tuner::DffQuery;
using crest::tuner::GemmShape;

struct Table {
  int64_t hidden = 0;
  std::string path;
  std::map<GemmKey, double> times;
};

DffQuery Window(int64_t hidden) {
  DffQuery q;
  q.dff.hidden = hidden;
  q.dff.ratio = *crest::tuner::ParseRatio("8/3");
  q.dff.window = 128;
  q.tokens = 8192;
  return q;
}

struct Run {
  int64_t gemms = 0;
  int rounds = 0;
  double regret = 0;
};

// The table's time of each candidate (0: the table lacks one of its GEMMs).
std::vector<double> TrueTimes(const Table& t, const crest::tuner::DffPlan& plan) {
  std::vector<double> out;
  for (const auto& gemms : plan.gemms) {
    double sum = 0;
    for (const GemmShape& g : gemms) {
      const auto it = t.times.find(GemmKey::Of(g));
      if (it == t.times.end()) return {};
      sum += it->second;
    }
    out.push_back(sum);
  }
  return out;
}

double Regret(const std::vector<double>& truth, int64_t leader, const crest::tuner::DffPlan& plan) {
  const auto at = std::find(plan.candidates.values.begin(), plan.candidates.values.end(), leader);
  const double best = *std::min_element(truth.begin(), truth.end());
  return truth[static_cast<size_t>(at - plan.candidates.values.begin())] / best - 1;
}

Run Adaptive(const Table& t, const crest::tuner::DffPlan& plan, const std::vector<double>& truth,
             double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0, noise);
  const DffQuery q = Window(t.hidden);
  auto adaptive =
      AdaptivePlan::Make(std::span<const DffQuery>(&q, 1), **crest::tuner::FindGpu("h100"));
  Run run;
  for (auto next = adaptive->Next(); !next.empty(); next = adaptive->Next()) {
    for (const GemmShape& g : next) {
      adaptive->Record(g, t.times.at(GemmKey::Of(g)) * (1 + jitter(rng)));
    }
    run.gemms += static_cast<int64_t>(next.size());
    ++run.rounds;
  }
  run.regret = Regret(truth, adaptive->States().front().leader, plan);
  return run;
}

Run Full(const Table& t, const crest::tuner::DffPlan& plan, const std::vector<double>& truth,
         double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0, noise);
  std::map<GemmKey, double> drawn;
  Run run;
  double best = std::numeric_limits<double>::infinity();
  int64_t leader = 0;
  for (size_t i = 0; i < plan.gemms.size(); ++i) {
    double sum = 0;
    for (const GemmShape& g : plan.gemms[i]) {
      const GemmKey key = GemmKey::Of(g);
      if (!drawn.contains(key)) drawn[key] = t.times.at(key) * (1 + jitter(rng));
      sum += drawn[key];
    }
    if (sum < best) {
      best = sum;
      leader = plan.candidates.values[i];
    }
  }
  run.gemms = static_cast<int64_t>(drawn.size());
  run.regret = Regret(truth, leader, plan);
  return run;
}

void Report(const Table& t, int seeds, double noise) {
  const auto plan = crest::tuner::PlanDff(Window(t.hidden));
  const std::vector<double> truth = TrueTimes(t, *plan);
  if (truth.empty()) {
    std::printf("%-6lld %-40s the table lacks GEMMs of the window\n",
                static_cast<long long>(t.hidden), t.path.c_str());
    return;
  }
  double gemms = 0, rounds = 0, worst_share = 0, regret = 0, worst = 0, full_regret = 0,
         full_worst = 0;
  int within = 0, full_within = 0;
  int64_t window_gemms = 0;
  for (int s = 1; s <= seeds; ++s) {
    const Run a = Adaptive(t, *plan, truth, noise, static_cast<uint64_t>(s));
    const Run f = Full(t, *plan, truth, noise, static_cast<uint64_t>(s));
    window_gemms = f.gemms;
    gemms += static_cast<double>(a.gemms);
    worst_share =
        std::max(worst_share, static_cast<double>(a.gemms) / static_cast<double>(f.gemms));
    rounds += a.rounds;
    regret += a.regret;
    worst = std::max(worst, a.regret);
    within += a.regret <= 0.01;
    full_regret += f.regret;
    full_worst = std::max(full_worst, f.regret);
    full_within += f.regret <= 0.01;
  }
  const double n = seeds;
  const std::string name = t.path.substr(t.path.rfind('/') + 1);
  std::printf(
      "%-6lld %-28s %6.1f/%lld (%4.1f%%, max %4.1f%%) %6.2f %7.2f%% %7.2f%% %6.1f%%   "
      "%7.2f%% %7.2f%% %6.1f%%\n",
      static_cast<long long>(t.hidden), name.c_str(), gemms / n,
      static_cast<long long>(window_gemms), 100 * gemms / n / static_cast<double>(window_gemms),
      100 * worst_share, rounds / n, 100 * regret / n, 100 * worst, 100 * within / n,
      100 * full_regret / n, 100 * full_worst, 100 * full_within / n);
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 200;
  double noise = 0.02;
  std::vector<Table> tables;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seeds" && i + 1 < argc) {
      seeds = std::atoi(argv[++i]);
    } else if (arg == "--noise" && i + 1 < argc) {
      noise = std::atof(argv[++i]);
    } else if (arg == "--calibration" && i + 1 < argc) {
      if (auto s = crest::tuner::LoadCalibrationFile(argv[++i]); !s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 2;
      }
    } else if (const size_t eq = arg.find('='); eq != std::string::npos) {
      Table t{std::atoll(arg.substr(0, eq).c_str()), arg.substr(eq + 1), {}};
      auto batch = crest::store::ReadTimingCsv(t.path, {"NVIDIA H100 80GB HBM3", "table", "", ""});
      if (!batch.ok()) {
        std::fprintf(stderr, "%s\n", std::string(batch.status().message()).c_str());
        return 2;
      }
      for (const auto& row : batch->rows) t.times[row.key] = row.time_us;
      tables.push_back(std::move(t));
    } else {
      std::fprintf(stderr,
                   "usage: adaptive_bench HIDDEN=TABLE.csv... [--seeds N] [--noise F] "
                   "[--calibration FILE]\n");
      return 2;
    }
  }
  std::printf(
      "adaptive plan vs full sweep, replayed (not measured): %d seeds, each GEMM's time = "
      "table x (1 + N(0, %.3f)); model %s\n",
      seeds, noise,
      crest::tuner::DescribeModel(**crest::tuner::FindGpu("h100"), crest::tuner::DType::kBf16)
          .c_str());
  std::printf("%-6s %-28s %-30s %6s %8s %8s %7s   %8s %8s %7s\n", "hidden", "table",
              "adaptive GEMMs (share, max)", "rounds", "regret", "max", "<=1%", "full:reg", "max",
              "<=1%");
  for (const Table& t : tables) Report(t, seeds, noise);
  return 0;
}
