#include "crest/answers/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <tuple>

#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"

namespace crest::answers {
namespace {

absl::Status BadPart(std::string_view flag, std::string_view part, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(flag, ": '", part, "' ", why));
}

std::optional<int64_t> Integer(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Midnight UTC of "YYYY-MM-DD" [µs since the epoch].
std::optional<int64_t> DayStartUs(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const auto year = Integer(text.substr(0, 4));
  const auto month = Integer(text.substr(5, 2));
  const auto day = Integer(text.substr(8, 2));
  if (!year || !month || !day || *year < 1970 || *month < 1 || *month > 12 || *day < 1 ||
      *day > 31) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year - 1900);
  tm.tm_mon = static_cast<int>(*month - 1);
  tm.tm_mday = static_cast<int>(*day);
  const time_t seconds = timegm(&tm);
  if (tm.tm_mday != *day) return std::nullopt;  // 2026-02-30 rolled over
  return static_cast<int64_t>(seconds) * 1'000'000;
}

constexpr int64_t kDayUs = int64_t{86'400} * 1'000'000;

absl::Status ReadDates(std::string_view value, std::string_view flag, std::string_view part,
                       store::RunFilter& f) {
  const size_t dots = value.find("..");
  const std::string_view from = dots == std::string_view::npos ? value : value.substr(0, dots);
  const std::string_view to = dots == std::string_view::npos ? value : value.substr(dots + 2);
  if (from.empty() && to.empty()) return BadPart(flag, part, "gives no day");
  if (!from.empty()) {
    f.from_us = DayStartUs(from);
    if (!f.from_us) return BadPart(flag, part, "needs days as YYYY-MM-DD (UTC)");
  }
  if (!to.empty()) {
    const auto end = DayStartUs(to);
    if (!end) return BadPart(flag, part, "needs days as YYYY-MM-DD (UTC)");
    f.to_us = *end + kDayUs;  // the whole last day
  }
  if (f.from_us && f.to_us && *f.from_us >= *f.to_us) return BadPart(flag, part, "ends before it starts");
  return absl::OkStatus();
}

absl::Status ReadPart(std::string_view part, std::string_view flag, store::RunFilter& f) {
  if (part == "all") return absl::OkStatus();
  const size_t colon = part.find(':');
  if (colon == std::string_view::npos || colon + 1 == part.size()) {
    return BadPart(flag, part,
                   "is not a selector: give job:N, cublaslt:V, device:UUID, host:NAME, "
                   "date:FROM..TO, gpu:MODEL or all");
  }
  const std::string_view kind = part.substr(0, colon);
  const std::string_view value = part.substr(colon + 1);
  if (kind == "job" || kind == "cublaslt") {
    const auto number = Integer(value);
    if (!number || *number < 0) return BadPart(flag, part, "needs a whole number from 0");
    (kind == "job" ? f.job_id : f.cublaslt) = *number;
  } else if (kind == "device") {
    f.device_uuid = std::string(value);
  } else if (kind == "host") {
    f.host = std::string(value);
  } else if (kind == "gpu") {
    auto gpu = FindGpu(value);
    if (!gpu.ok()) return BadPart(flag, part, std::string(gpu.status().message()));
    f.gpu_model = std::string((*gpu)->name);
  } else if (kind == "date") {
    return ReadDates(value, flag, part, f);
  } else {
    return BadPart(flag, part,
                   "has an unknown kind: give job, cublaslt, device, host, date, gpu or all");
  }
  return absl::OkStatus();
}

std::string AlgoText(const AlgoIdentity& a) {
  return StrCat("algo ", a.algo_id, " tile ", a.tile_m, "x", a.tile_n, " stages ", a.stages,
                " split-k ", a.split_k, " swizzle ", a.swizzle, " cluster ", a.cluster_shape);
}

auto AlgoConfig(const AlgoIdentity& a) {
  return std::tuple(a.algo_id, a.tile, a.stages, a.split_k, a.reduction_scheme, a.swizzle,
                    a.custom_option, a.cluster_shape);
}

using Key = std::pair<std::string, store::GemmKey>;  // GPU model, GEMM

// Per GEMM, the newest run of a side that has it (later start, then the
// larger job id, then the device and software ids: a fixed choice).
std::map<Key, store::SelectedBest> NewestPerGemm(std::vector<store::SelectedBest> rows,
                                                 const CompareQuery& query) {
  std::map<Key, store::SelectedBest> out;
  for (store::SelectedBest& b : rows) {
    if (!query.study_of.empty() && !query.study_of.contains(b.row.key)) continue;
    Key key{b.row.device.gpu_model, b.row.key};
    auto [it, added] = out.try_emplace(key, b);
    const auto order = [](const store::SelectedBest& x) {
      return std::tuple(x.best.started_us, x.best.run.job_id, x.best.run.device_id,
                        x.best.run.software_id);
    };
    if (!added && order(b) > order(it->second)) it->second = std::move(b);
  }
  return out;
}

CompareSide SideOf(const store::SelectedBest& b) {
  CompareSide side;
  side.run.job_id = b.best.run.job_id;
  side.run.started_us = b.best.started_us;
  side.run.device_uuid = b.row.device.uuid;
  side.run.host = b.row.device.host;
  side.provenance = DescribeProvenance(b.row.device, b.row.software);
  side.replayed = !b.row.device.replay.empty();
  side.median_us = b.best.median_us;
  side.low_us = b.best.ci_low_us > 0 ? b.best.ci_low_us : b.best.median_us;
  side.high_us = b.best.ci_high_us > 0 ? b.best.ci_high_us : b.best.median_us;
  side.samples = b.row.result.stats.samples;
  side.algo = AlgoText(b.row.result.algo);
  return side;
}

std::string ErrorClassOf(const std::string& gpu_model, const store::GemmKey& key) {
  auto gpu = FindGpu(gpu_model);
  if (!gpu.ok()) return "";
  GemmShape g;
  g.m = key.m;
  g.n = key.n;
  g.k = key.k;
  g.batch = key.batch;
  g.dtype = key.dtype;
  g.a_transposed = key.a_transposed;
  g.b_transposed = key.b_transposed;
  auto p = Predict(g, **gpu);
  if (!p.ok()) return "";
  return std::string(kErrorClasses[p->error_class]);
}

void Count(CompareGroup& group, const GemmComparison& c) {
  ++group.gemms;
  switch (c.verdict) {
    case Verdict::kFaster: ++group.faster; break;
    case Verdict::kSame: ++group.same; break;
    case Verdict::kSlower: ++group.slower; break;
    case Verdict::kUnresolved: ++group.unresolved; break;
  }
  if (c.algo_changed) ++group.algo_changes;
}

std::vector<CompareGroup> GroupBy(const std::vector<GemmComparison>& gemms,
                                  std::string GemmComparison::*field) {
  std::map<std::string, std::pair<CompareGroup, double>> groups;
  for (const GemmComparison& c : gemms) {
    auto& [group, log_sum] = groups[c.*field];
    group.name = c.*field;
    Count(group, c);
    log_sum += std::log(c.ratio);
  }
  std::vector<CompareGroup> out;
  for (auto& [name, entry] : groups) {
    entry.first.geomean_ratio = std::exp(entry.second / static_cast<double>(entry.first.gemms));
    out.push_back(entry.first);
  }
  return out;
}

std::string DescribeRunUsed(const CompareSide& side, const std::string& job_name) {
  const std::string job = side.run.job_id == 0 ? std::string("rows outside any job")
                                               : StrCat("job ", side.run.job_id);
  return StrCat(job, job_name.empty() ? "" : StrCat(" (", job_name, ")"), " on ", side.provenance);
}

}  // namespace

absl::StatusOr<store::RunFilter> ParseRunSelector(std::string_view text, std::string_view flag) {
  if (text.empty()) return absl::InvalidArgumentError(StrCat(flag, ": give a selector"));
  if (text.size() > kMaxSelectorBytes) {
    return absl::InvalidArgumentError(
        StrCat(flag, ": is ", text.size(), " bytes long; at most ", kMaxSelectorBytes));
  }
  store::RunFilter f;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    if (auto s = ReadPart(text.substr(begin, comma - begin), flag, f); !s.ok()) return s;
    begin = comma + 1;
  }
  return f;
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSame: return "same";
    case Verdict::kSlower: return "slower";
    case Verdict::kUnresolved: return "unresolved";
  }
  return "?";
}

Verdict Judge(double ratio, double low, double high, double threshold) {
  if (ratio > 1 + threshold) return low > 1 ? Verdict::kSlower : Verdict::kUnresolved;
  if (ratio < 1 / (1 + threshold)) return high < 1 ? Verdict::kFaster : Verdict::kUnresolved;
  return Verdict::kSame;
}

absl::StatusOr<CompareReport> CompareFilters(store::Store& db, const store::RunFilter& base,
                                             const store::RunFilter& now,
                                             const CompareQuery& query) {
  if (!(query.threshold >= 0 && query.threshold <= kMaxCompareThreshold)) {
    return absl::InvalidArgumentError(
        StrCat("threshold: must be between 0 and ", kMaxCompareThreshold, " (a fraction: 0.03 is 3%)"));
  }
  auto base_rows = db.SelectRunBests(base);
  if (!base_rows.ok()) return base_rows.status();
  auto now_rows = db.SelectRunBests(now);
  if (!now_rows.ok()) return now_rows.status();
  for (const auto& [rows, side, text] : {std::tuple(&*base_rows, "base", &query.base),
                                         std::tuple(&*now_rows, "new", &query.now)}) {
    if (rows->empty()) {
      return absl::NotFoundError(StrCat(side, ": '", *text, "' selects no run measured in ",
                                        CacheModeName(query.mode.cache), " L2, ",
                                        ClockPolicyName(query.mode.clocks), " clocks in ",
                                        db.path()));
    }
  }
  const auto base_best = NewestPerGemm(*std::move(base_rows), query);
  const auto now_best = NewestPerGemm(*std::move(now_rows), query);
  CompareReport report;
  report.query = query;
  std::map<store::RunKey, CompareSide> base_sides, now_sides;
  for (const auto& [key, b] : base_best) {
    const auto found = now_best.find(key);
    if (found == now_best.end()) {
      ++report.only_base;
      continue;
    }
    const store::SelectedBest& n = found->second;
    if (n.best.run == b.best.run) {
      ++report.same_run;
      continue;
    }
    GemmComparison c;
    c.gpu_model = key.first;
    c.key = key.second;
    c.alignment = ErrorClassOf(c.gpu_model, c.key);
    if (const auto study = query.study_of.find(c.key); study != query.study_of.end()) {
      c.study = study->second;
    }
    c.base = SideOf(b);
    c.now = SideOf(n);
    c.ratio = c.now.median_us / c.base.median_us;
    c.ratio_low = c.now.low_us / c.base.high_us;
    c.ratio_high = c.now.high_us / c.base.low_us;
    c.coverage = std::max(0.0, MedianIntervalCoverage(c.base.samples) +
                                   MedianIntervalCoverage(c.now.samples) - 1);
    c.verdict = Judge(c.ratio, c.ratio_low, c.ratio_high, query.threshold);
    c.algo_changed = AlgoConfig(b.row.result.algo) != AlgoConfig(n.row.result.algo);
    report.replayed = report.replayed || c.base.replayed || c.now.replayed;
    base_sides.try_emplace(b.best.run, c.base);
    now_sides.try_emplace(n.best.run, c.now);
    report.gemms.push_back(std::move(c));
  }
  for (const auto& [key, n] : now_best) report.only_now += base_best.contains(key) ? 0 : 1;
  std::stable_sort(report.gemms.begin(), report.gemms.end(),
                   [](const GemmComparison& x, const GemmComparison& y) { return x.ratio > y.ratio; });
  report.all = {"all"};
  double log_sum = 0;
  for (const GemmComparison& c : report.gemms) {
    Count(report.all, c);
    log_sum += std::log(c.ratio);
  }
  report.all.geomean_ratio =
      report.gemms.empty() ? 1 : std::exp(log_sum / static_cast<double>(report.gemms.size()));
  report.by_alignment = GroupBy(report.gemms, &GemmComparison::alignment);
  if (!query.study_of.empty()) report.by_study = GroupBy(report.gemms, &GemmComparison::study);
  for (const auto& [sides, lines] : {std::pair(&base_sides, &report.base_runs),
                                     std::pair(&now_sides, &report.now_runs)}) {
    std::vector<store::RunKey> keys;
    for (const auto& [run, side] : *sides) keys.push_back(run);
    auto described = db.DescribeRuns(keys);
    if (!described.ok()) return described.status();
    for (size_t i = 0; i < keys.size(); ++i) {
      lines->push_back(DescribeRunUsed(sides->at(keys[i]), (*described)[i].info.name));
    }
  }
  return report;
}

std::vector<std::string> SummarizeComparison(const CompareReport& r, size_t max_gemms) {
  const CompareGroup& a = r.all;
  std::vector<std::string> lines;
  lines.push_back(StrCat(r.replayed ? "REPLAYED (not measured): " : "", a.slower, " slower, ",
                         a.unresolved, " unresolved, ", a.same, " same, ", a.faster,
                         " faster of ", a.gemms, " GEMMs at threshold ",
                         Decimals(r.query.threshold * 100, 1), "%; geometric mean ratio ",
                         Decimals(a.geomean_ratio, 4), "; best algorithm changed for ",
                         a.algo_changes));
  size_t shown = 0;
  for (const GemmComparison& c : r.gemms) {
    if (c.verdict != Verdict::kSlower || shown == max_gemms) continue;
    ++shown;
    const store::GemmKey& k = c.key;
    lines.push_back(StrCat("slower: ", k.batch > 1 ? StrCat(k.batch, "x") : "", k.m, "x", k.n,
                           "x", k.k, " ", DTypeName(k.dtype), " ", k.a_transposed ? "T" : "N",
                           k.b_transposed ? "T" : "N", " ", Decimals(c.base.median_us, 1), " -> ",
                           Decimals(c.now.median_us, 1), " us, ratio ", Decimals(c.ratio, 4), " (",
                           Decimals(c.ratio_low, 4), "-", Decimals(c.ratio_high, 4), ")"));
  }
  if (a.slower > static_cast<int64_t>(shown)) {
    lines.push_back(StrCat("… and ", a.slower - static_cast<int64_t>(shown),
                           " more slower GEMMs (crest compare lists them all)"));
  }
  return lines;
}

absl::StatusOr<CompareReport> Compare(store::Store& db, const CompareQuery& query) {
  auto base = ParseRunSelector(query.base, query.base_name);
  if (!base.ok()) return base.status();
  auto now = ParseRunSelector(query.now, query.now_name);
  if (!now.ok()) return now.status();
  for (store::RunFilter* f : {&*base, &*now}) {
    f->mode = query.mode;
    f->algo = query.algo;
  }
  return CompareFilters(db, *base, *now, query);
}

}  // namespace crest::answers
