// A fleet's slow GPUs (`crest fleet pull`, `crest compare --fleet`,
// crestd's crest_fleet_* metrics): each device's GEMMs set against the
// fleet median of the same GPU model on the same cuBLASLt version, so that
// a throttled or faulty GPU stands out.
//
// The figures are each device's newest run per GEMM (Store::NewestRunBests
// with each_device): its fastest verified algorithm's median and 95%
// interval, or cuBLASLt's first choice with AlgoChoice::kDefault. Each
// GEMM's figure is one run's; a device's GEMMs may come from different
// runs of it (a GEMM last measured on another night).
//
// Per GEMM that at least kMinFleetDevices devices of a group measured, a
// device is set against the others: the reference is the median of the
// other devices' medians, and its interval the medians of their intervals'
// ends (it holds whenever their intervals hold, as a median is monotone in
// each value). The ratio device / reference has the interval
// [low / reference_high, high / reference_low] and a verdict by Judge at
// the threshold. Unlike compare's, that interval's coverage is not bounded
// (it needs the device's interval and, at worst, every other device's to
// hold), so a GEMM's verdict carries no stated error rate: the per-GEMM
// counts point at GEMMs to look at; the device's verdict is the rule below.
//
// Per device, its figure is the median of its GEMMs' ratios, and that
// median's distribution-free order-statistic interval at confidence
// 1 − family_error / D for the D devices of its group (Bonferroni): a
// device is called slower when the median is beyond the threshold and the
// whole interval above 1, and then a device whose typical GEMM is not
// slower than the fleet's is named in at most `family_error` of reports
// over its whole group — if its GEMMs' ratios are independent draws (GEMMs
// that share a kernel are not quite). Too few GEMMs for that confidence is
// "unresolved", never "same".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "crest/answers/compare.h"
#include "crest/store/records.h"
#include "crest/tuner/gemm.h"

namespace crest::store {
class Store;  // crest/store/store.h: a caller passing one has it
}  // namespace crest::store

namespace crest::answers {

// A GEMM is set against the fleet when this many devices measured it: the
// device and at least two others, so that one slow device is never the
// reference alone.
inline constexpr int64_t kMinFleetDevices = 3;
// Answers (GEMM × device) one check reads; crestd allows fewer.
inline constexpr int64_t kMaxFleetAnswers = 2'000'000;
inline constexpr double kDefaultFleetError = 0.05;

struct FleetQuery {
  std::optional<std::string> gpu_model;  // catalogue name; every model when unset
  tuner::MeasureMode mode;
  tuner::AlgoChoice algo = tuner::AlgoChoice::kBest;
  double threshold = kDefaultCompareThreshold;
  double family_error = kDefaultFleetError;  // per group of devices (above)
  int64_t max_answers = kMaxFleetAnswers;    // more is ResourceExhausted
  size_t slowest_listed = 5;                 // per device: its slowest GEMMs judged slower
};

// One GEMM of a device against the fleet.
struct FleetGemm {
  store::GemmKey key;
  double median_us = 0;     // the device's
  double reference_us = 0;  // the other devices' median
  double ratio = 1;
  double ratio_low = 1;
  double ratio_high = 1;
  Verdict verdict = Verdict::kSame;
};

struct FleetDevice {
  std::string gpu_model;
  int64_t cublaslt = 0;
  std::string uuid;
  std::string host;
  std::string provenance;  // DescribeProvenance of the device and software
  bool replayed = false;
  int64_t gemms = 0;   // GEMMs set against the fleet
  int64_t slower = 0;  // of them, judged slower / faster (per GEMM, as compare.h)
  int64_t faster = 0;
  double ratio = 1;  // the median of its GEMMs' ratios
  double ratio_low = 1;
  double ratio_high = 1;
  double coverage = 0;  // that interval's coverage (≥ 1 − family_error / devices when resolved)
  Verdict verdict = Verdict::kUnresolved;
  std::vector<FleetGemm> slowest;  // slowest ratio first, at most slowest_listed
};

// One GPU model on one cuBLASLt version.
struct FleetGroup {
  std::string gpu_model;
  int64_t cublaslt = 0;
  int64_t devices = 0;
  int64_t gemms = 0;  // GEMMs at least kMinFleetDevices of its devices measured
};

struct FleetHealth {
  FleetQuery query;
  std::vector<FleetGroup> groups;
  std::vector<FleetDevice> devices;  // slowest first; devices of groups too small included
  bool replayed = false;             // some figure is replayed, not measured
};

// The fleet in `db`. InvalidArgument for a bad threshold or error rate;
// ResourceExhausted naming the limit when it would read more answers.
absl::StatusOr<FleetHealth> CheckFleet(store::Store& db, const FleetQuery& query);

// The devices judged slower than their fleet.
int64_t SlowerDevices(const FleetHealth& health);

// "2 of 24 devices slower than their fleet at threshold 3%: …", then one
// line per slower device with its ratio, interval, host and slowest GEMMs;
// what `crest fleet pull` prints after merging.
std::vector<std::string> SummarizeFleet(const FleetHealth& health);

}  // namespace crest::answers
