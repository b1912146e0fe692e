#include "crest/answers/fleet_health.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "run_figures.h"

namespace crest::answers {
namespace {

// A device's answer for one GEMM.
struct Entry {
  int64_t device_id = 0;
  double median_us = 0;
  double low_us = 0;
  double high_us = 0;
};

using GroupKey = std::pair<std::string, int64_t>;  // GPU model, cuBLASLt version

struct Group {
  std::map<store::GemmKey, std::vector<Entry>> gemms;
  std::map<int64_t, FleetDevice> devices;  // by device id
};

double Median(std::vector<double>& values) {
  const size_t n = values.size();
  std::sort(values.begin(), values.end());
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Each device's newest answers, grouped by GPU model and cuBLASLt version.
absl::StatusOr<std::map<GroupKey, Group>> ReadGroups(store::Store& db, const FleetQuery& q) {
  store::RunFilter filter;
  filter.gpu_model = q.gpu_model;
  filter.mode = q.mode;
  filter.algo = q.algo;
  filter.each_device = true;
  filter.limit = q.max_answers;
  auto rows = db.NewestRunBests(filter);
  if (absl::IsResourceExhausted(rows.status())) {
    return absl::ResourceExhaustedError(StrCat("fleet: the database ", rows.status().message(),
                                               " (GEMMs × devices); narrow it to one GPU model"));
  }
  if (!rows.ok()) return rows.status();
  std::set<store::RunKey> runs;
  for (const store::SelectedBest& b : *rows) runs.insert(b.best.run);
  auto records = internal::DescribeEach(db, runs);
  if (!records.ok()) return records.status();
  std::map<GroupKey, Group> groups;
  for (const store::SelectedBest& b : *rows) {
    const store::RunRecord& r = records->at(b.best.run);
    Group& g = groups[{b.gpu_model, r.software.cublaslt}];
    FleetDevice& d = g.devices[b.best.run.device_id];
    if (d.uuid.empty()) {
      d.gpu_model = b.gpu_model;
      d.cublaslt = r.software.cublaslt;
      d.uuid = r.device.uuid;
      d.host = r.device.host;
      d.provenance = DescribeProvenance(r.device, r.software);
      d.replayed = !r.device.replay.empty();
    }
    const auto [low, high] = internal::IntervalOf(b.best);
    g.gemms[b.key].push_back({b.best.run.device_id, b.best.median_us, low, high});
  }
  return groups;
}

// Every device of the GEMM against the median of the others.
void SetAgainstOthers(const store::GemmKey& key, const std::vector<Entry>& entries,
                      double threshold, std::map<int64_t, std::vector<FleetGemm>>& ratios) {
  std::vector<double> medians, lows, highs;
  for (size_t i = 0; i < entries.size(); ++i) {
    medians.clear();
    lows.clear();
    highs.clear();
    for (size_t j = 0; j < entries.size(); ++j) {
      if (j == i) continue;
      medians.push_back(entries[j].median_us);
      lows.push_back(entries[j].low_us);
      highs.push_back(entries[j].high_us);
    }
    const Entry& e = entries[i];
    FleetGemm g;
    g.key = key;
    g.median_us = e.median_us;
    g.reference_us = Median(medians);
    g.ratio = e.median_us / g.reference_us;
    g.ratio_low = e.low_us / Median(highs);
    g.ratio_high = e.high_us / Median(lows);
    g.verdict = Judge(g.ratio, g.ratio_low, g.ratio_high, threshold);
    ratios[e.device_id].push_back(g);
  }
}

// The device's figure from its GEMMs' ratios (the header's rule).
void JudgeDevice(std::vector<FleetGemm>& gemms, int64_t devices, const FleetQuery& q,
                 FleetDevice& d) {
  d.gemms = static_cast<int64_t>(gemms.size());
  if (gemms.empty()) return;
  std::vector<double> ratios;
  for (const FleetGemm& g : gemms) {
    ratios.push_back(g.ratio);
    d.slower += g.verdict == Verdict::kSlower ? 1 : 0;
    d.faster += g.verdict == Verdict::kFaster ? 1 : 0;
  }
  const size_t n = ratios.size();
  d.ratio = Median(ratios);  // sorts them
  const double confidence = 1 - q.family_error / static_cast<double>(devices);
  const tuner::MedianOrderInterval interval =
      tuner::MedianIntervalOf(static_cast<int64_t>(n), confidence);
  d.coverage = interval.coverage;
  d.ratio_low = ratios[static_cast<size_t>(interval.rank) - 1];
  d.ratio_high = ratios[n - static_cast<size_t>(interval.rank)];
  d.verdict = interval.coverage >= confidence
                  ? Judge(d.ratio, d.ratio_low, d.ratio_high, q.threshold)
                  : Verdict::kUnresolved;
  std::sort(gemms.begin(), gemms.end(),
            [](const FleetGemm& a, const FleetGemm& b) { return a.ratio > b.ratio; });
  for (const FleetGemm& g : gemms) {
    if (d.slowest.size() == q.slowest_listed) break;
    if (g.verdict == Verdict::kSlower) d.slowest.push_back(g);
  }
}

}  // namespace

absl::StatusOr<FleetHealth> CheckFleet(store::Store& db, const FleetQuery& q) {
  if (!(q.threshold >= 0 && q.threshold <= kMaxCompareThreshold)) {
    return absl::InvalidArgumentError(StrCat("threshold: must be between 0 and ",
                                             kMaxCompareThreshold, " (a fraction: 0.03 is 3%)"));
  }
  if (!(q.family_error > 0 && q.family_error < 1)) {
    return absl::InvalidArgumentError("family error: must be between 0 and 1, both excluded");
  }
  store::ReadSnapshot snapshot(db);  // every group from one state of the database
  auto groups = ReadGroups(db, q);
  if (!groups.ok()) return groups.status();
  FleetHealth health;
  health.query = q;
  for (auto& [key, group] : *groups) {
    FleetGroup summary{key.first, key.second, static_cast<int64_t>(group.devices.size()), 0};
    std::map<int64_t, std::vector<FleetGemm>> ratios;
    for (const auto& [gemm, entries] : group.gemms) {
      if (static_cast<int64_t>(entries.size()) < kMinFleetDevices) continue;
      ++summary.gemms;
      SetAgainstOthers(gemm, entries, q.threshold, ratios);
    }
    for (auto& [id, device] : group.devices) {
      JudgeDevice(ratios[id], summary.devices, q, device);
      health.replayed = health.replayed || device.replayed;
      health.devices.push_back(std::move(device));
    }
    health.groups.push_back(summary);
  }
  std::stable_sort(health.devices.begin(), health.devices.end(),
                   [](const FleetDevice& a, const FleetDevice& b) {
                     return std::tuple(a.gemms > 0, a.ratio) > std::tuple(b.gemms > 0, b.ratio);
                   });
  return health;
}

int64_t SlowerDevices(const FleetHealth& h) {
  return std::count_if(h.devices.begin(), h.devices.end(),
                       [](const FleetDevice& d) { return d.verdict == Verdict::kSlower; });
}

std::vector<std::string> SummarizeFleet(const FleetHealth& h) {
  const int64_t slower = SlowerDevices(h);
  int64_t unresolved = 0, compared = 0;
  for (const FleetDevice& d : h.devices) {
    if (d.gemms == 0) continue;
    ++compared;
    unresolved += d.verdict == Verdict::kUnresolved ? 1 : 0;
  }
  std::vector<std::string> lines;
  lines.push_back(StrCat(
      h.replayed ? "REPLAYED (not measured): " : "", slower, " of ", compared,
      " devices slower than their fleet (the median of the other devices of the GPU model on "
      "its cuBLASLt version) at threshold ",
      Decimals(h.query.threshold * 100, 1), "%, ", unresolved, " unresolved; ",
      h.devices.size() - static_cast<size_t>(compared), " without a fleet of ", kMinFleetDevices,
      " devices measuring the same GEMMs"));
  for (const FleetDevice& d : h.devices) {
    if (d.verdict != Verdict::kSlower) continue;
    lines.push_back(StrCat("slower: ", d.host.empty() ? "?" : d.host, " ", d.uuid, " (",
                           d.gpu_model, ", cuBLASLt ", d.cublaslt, "): median GEMM ratio ",
                           Decimals(d.ratio, 4), " (", Decimals(d.ratio_low, 4), "-",
                           Decimals(d.ratio_high, 4), ") over ", d.gemms, " GEMMs, ", d.slower,
                           " of them slower"));
    for (const FleetGemm& g : d.slowest) {
      lines.push_back(StrCat("  ", DescribeGemm(g.key), " ", Decimals(g.median_us, 1),
                             " us against the fleet's ", Decimals(g.reference_us, 1), " us, ratio ",
                             Decimals(g.ratio, 4)));
    }
  }
  return lines;
}

}  // namespace crest::answers
