// Two selections of runs set side by side, GEMM by GEMM (`crest compare`,
// a revalidation's report, a fleet's slow GPUs): did a library upgrade, a
// node or a night make GEMMs slower, beyond a threshold and beyond the
// noise of the measurements?
//
// Each side is the runs a selector keeps (store::RunFilter). Per GEMM and
// side, the newest run of the side that has the GEMM answers (its fastest
// verified algorithm's median and 95% interval, or cuBLASLt's first choice
// with AlgoChoice::kDefault): one run's figure, never a pool. The ratio
// new/base has the interval [new_low / base_high, new_high / base_low],
// which holds whenever both medians' intervals hold: its coverage is at
// least 1 − (1 − c_base) − (1 − c_new) (90% for two 95% intervals; less for
// rows of fewer than 6 samples, as each comparison states).
//
// A verdict, with t the threshold:
//   slower      ratio > 1 + t and the whole interval above 1;
//   faster      ratio < 1 / (1 + t) and the whole interval below 1;
//   same        the whole interval within [1 / (1 + t), 1 + t];
//   unresolved  otherwise: the noise could hide a change beyond the
//               threshold, or explain one.
// So "slower" is said of a GEMM whose true ratio is at most 1, and "same"
// of one whose true ratio is beyond the threshold, with probability at most
// 1 − coverage (≤ 10% for two 95% intervals; in practice less, as two
// order-statistic intervals rarely part by chance) — per GEMM, not over a
// whole report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/store/records.h"
#include "crest/tuner/gemm.h"

namespace crest::store {
class Store;  // crest/store/store.h: a caller passing one has it
}  // namespace crest::store

namespace crest::answers {

inline constexpr double kDefaultCompareThreshold = 0.03;
inline constexpr double kMaxCompareThreshold = 1.0;
inline constexpr size_t kMaxSelectorBytes = 512;
// GEMMs one side of a comparison may answer (each a few hundred bytes while
// compared); crestd allows fewer (service/crest_service.h).
inline constexpr int64_t kMaxCompareGemms = 2'000'000;

// Parses a selector: parts joined by ',' that all hold —
//   job:N           the runs of job N (0: rows written outside any job)
//   cublaslt:V      runs on cuBLASLt version V (e.g. 130100)
//   device:UUID     runs on that device
//   host:NAME       runs on that host
//   date:FROM..TO   runs started on those UTC days (YYYY-MM-DD, inclusive;
//                   either end may be left out; date:DAY is one day)
//   gpu:MODEL       results of that catalogue GPU model
//   all             every run
// InvalidArgument names `flag` and the part at fault.
absl::StatusOr<store::RunFilter> ParseRunSelector(std::string_view text, std::string_view flag);

enum class Verdict { kFaster, kSame, kSlower, kUnresolved };
std::string_view VerdictName(Verdict verdict);  // "faster", "same", "slower", "unresolved"
// The verdict a name VerdictName gives; nullopt for any other word.
std::optional<Verdict> ParseVerdict(std::string_view name);

// The verdict on a ratio and its interval at `threshold` (above).
Verdict Judge(double ratio, double low, double high, double threshold);

struct CompareQuery {
  std::string base;  // selectors, as ParseRunSelector reads them
  std::string now;
  // What errors call them: the CLI's flags, or crestd's request fields.
  std::string base_name = "--base";
  std::string now_name = "--new";
  double threshold = kDefaultCompareThreshold;
  int64_t max_gemms = kMaxCompareGemms;  // per side; more is ResourceExhausted naming it
  tuner::MeasureMode mode;
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;
  // When not empty: only these GEMMs, each in the study it names (a spec's
  // plan, its d_ff studies by DffStudyKey); GEMMs outside it are left out.
  std::map<store::GemmKey, std::string> study_of;
};

// One side's answer for a GEMM.
struct CompareSide {
  tuner::RunInfo run;
  std::string provenance;  // DescribeProvenance of the run's device and software
  bool replayed = false;
  double median_us = 0;
  double low_us = 0;
  double high_us = 0;
  int64_t samples = 0;
  std::string algo;  // "algo 21 tile 256x128 stages 4 split-k 1 swizzle 0 cluster 0"
};

struct GemmComparison {
  std::string gpu_model;
  store::GemmKey key;
  std::string alignment;  // the predictor's error class (kErrorClasses), "" if not predicted
  std::string study;      // from CompareQuery::study_of; "" without one
  CompareSide base;
  CompareSide now;
  double ratio = 1;  // now / base
  double ratio_low = 1;
  double ratio_high = 1;
  double coverage = 0;  // the ratio interval's coverage at least
  Verdict verdict = Verdict::kSame;
  bool algo_changed = false;
};

struct CompareGroup {
  std::string name;
  int64_t gemms = 0;
  int64_t faster = 0;
  int64_t same = 0;
  int64_t slower = 0;
  int64_t unresolved = 0;
  int64_t algo_changes = 0;
  double geomean_ratio = 1;  // of its GEMMs' ratios
};

struct CompareReport {
  CompareQuery query;
  std::vector<GemmComparison> gemms;  // slowest ratio first
  CompareGroup all;
  std::vector<CompareGroup> by_alignment;
  std::vector<CompareGroup> by_study;  // with study_of only
  int64_t only_base = 0;               // GEMMs one side measured and the other did not
  int64_t only_now = 0;
  int64_t same_run = 0;   // GEMMs whose newest run is the same on both sides (left out)
  bool replayed = false;  // a side holds replayed runs: no figure is a measurement
  std::vector<std::string> base_runs;  // "job 3 (nightly) on <provenance>", one per run used
  std::vector<std::string> now_runs;
};

// Compares the two selections in `db`. InvalidArgument for a bad selector
// or threshold; NotFound when a side selects no run.
absl::StatusOr<CompareReport> Compare(store::Store& db, const CompareQuery& query);

// The same, with filters already made (a revalidation: its job against
// every other software version of its GPU model).
absl::StatusOr<CompareReport> CompareFilters(store::Store& db, const store::RunFilter& base,
                                             const store::RunFilter& now,
                                             const CompareQuery& query);

// "8192x4096x11008 bf16 NT" ("4x…" when batched): a GEMM as reports name it.
std::string DescribeGemm(const store::GemmKey& key);

// "2 slower, 0 unresolved, 510 same, 2 faster of 514 GEMMs at threshold 3%;
// geometric mean ratio 1.0030; best algorithm changed for 5", each side's
// runs (their device and software, or replayed table; at most 4 a side),
// then one line per slower GEMM (at most `max_gemms`): what a revalidation
// reports.
std::vector<std::string> SummarizeComparison(const CompareReport& report, size_t max_gemms);

}  // namespace crest::answers
