#include "crest/answers/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <set>
#include <tuple>

#include "crest/answers/answers.h"
#include "crest/common/name_table.h"
#include "crest/common/str_cat.h"
#include "crest/tuner/gpu_catalogue.h"
#include "crest/tuner/predictor.h"
#include "run_figures.h"

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
  if (f.from_us && f.to_us && *f.from_us >= *f.to_us)
    return BadPart(flag, part, "ends before it starts");
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
    auto gpu = tuner::FindGpu(value);
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

std::string AlgoText(const tuner::AlgoIdentity& a) {
  return StrCat("algo ", a.algo_id, " tile ", a.tile_m, "x", a.tile_n, " stages ", a.stages,
                " split-k ", a.split_k, " swizzle ", a.swizzle, " cluster ", a.cluster_shape);
}

using Key = std::pair<std::string, store::GemmKey>;  // GPU model, GEMM

// A side's answer per GEMM (the newest selected run's), within the query's
// study GEMMs when it names some. NotFound when the side selects no run.
absl::StatusOr<std::map<Key, store::SelectedBest>> SelectSide(store::Store& db,
                                                              const store::RunFilter& filter,
                                                              const CompareQuery& query,
                                                              std::string_view side,
                                                              const std::string& text) {
  store::RunFilter bounded = filter;
  bounded.limit = query.max_gemms;
  auto rows = db.NewestRunBests(bounded);
  if (absl::IsResourceExhausted(rows.status())) {
    return absl::ResourceExhaustedError(StrCat(side == "base" ? query.base_name : query.now_name,
                                               ": '", text, "' ", rows.status().message(),
                                               "; narrow it (a job, a version, a date range)"));
  }
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return absl::NotFoundError(StrCat(
        side, ": '", text, "' selects no run measured in ", tuner::CacheModeName(query.mode.cache),
        " L2, ", tuner::ClockPolicyName(query.mode.clocks), " clocks in ", db.path()));
  }
  std::map<Key, store::SelectedBest> out;
  for (store::SelectedBest& b : *rows) {
    if (!query.study_of.empty() && !query.study_of.contains(b.key)) continue;
    Key key{b.gpu_model, b.key};
    out.emplace(std::move(key), std::move(b));
  }
  return out;
}

CompareSide SideOf(const store::SelectedBest& b, const store::RunRecord& run) {
  CompareSide side;
  side.run = run.info;
  side.run.started_us = b.best.started_us;
  side.provenance = DescribeProvenance(run.device, run.software);
  side.replayed = !run.device.replay.empty();
  side.median_us = b.best.median_us;
  std::tie(side.low_us, side.high_us) = internal::IntervalOf(b.best);
  side.samples = b.samples;
  side.algo = AlgoText(b.algo);
  return side;
}

std::string ErrorClassOf(const std::string& gpu_model, const store::GemmKey& key) {
  auto gpu = tuner::FindGpu(gpu_model);
  if (!gpu.ok()) return "";
  auto p = tuner::Predict(key.Shape(), **gpu);
  if (!p.ok()) return "";
  return std::string(tuner::kErrorClasses[p->error_class]);
}

GemmComparison CompareOne(const Key& key, const CompareSide& base, const CompareSide& now,
                          bool algo_changed, const CompareQuery& query) {
  GemmComparison c;
  c.gpu_model = key.first;
  c.key = key.second;
  c.alignment = ErrorClassOf(c.gpu_model, c.key);
  if (const auto study = query.study_of.find(c.key); study != query.study_of.end()) {
    c.study = study->second;
  }
  c.base = base;
  c.now = now;
  c.ratio = now.median_us / base.median_us;
  c.ratio_low = now.low_us / base.high_us;
  c.ratio_high = now.high_us / base.low_us;
  c.coverage = std::max(0.0, tuner::MedianIntervalCoverage(base.samples) +
                                 tuner::MedianIntervalCoverage(now.samples) - 1);
  c.verdict = Judge(c.ratio, c.ratio_low, c.ratio_high, query.threshold);
  c.algo_changed = algo_changed;
  return c;
}

CompareGroup Summarise(std::string name, const std::vector<const GemmComparison*>& gemms) {
  CompareGroup group{std::move(name)};
  double log_sum = 0;
  for (const GemmComparison* c : gemms) {
    ++group.gemms;
    switch (c->verdict) {
      case Verdict::kFaster:
        ++group.faster;
        break;
      case Verdict::kSame:
        ++group.same;
        break;
      case Verdict::kSlower:
        ++group.slower;
        break;
      case Verdict::kUnresolved:
        ++group.unresolved;
        break;
    }
    if (c->algo_changed) ++group.algo_changes;
    log_sum += std::log(c->ratio);
  }
  if (!gemms.empty()) group.geomean_ratio = std::exp(log_sum / static_cast<double>(gemms.size()));
  return group;
}

std::vector<CompareGroup> GroupBy(const std::vector<GemmComparison>& gemms,
                                  std::string GemmComparison::*field) {
  std::map<std::string, std::vector<const GemmComparison*>> groups;
  for (const GemmComparison& c : gemms) groups[c.*field].push_back(&c);
  std::vector<CompareGroup> out;
  for (const auto& [name, members] : groups) out.push_back(Summarise(name, members));
  return out;
}

std::vector<std::string> DescribeRunsUsed(const std::set<store::RunKey>& used,
                                          const std::map<store::RunKey, store::RunRecord>& runs) {
  std::vector<std::string> lines;
  for (const store::RunKey& key : used) {
    const store::RunRecord& r = runs.at(key);
    const std::string job =
        key.job_id == 0 ? std::string("rows outside any job") : StrCat("job ", key.job_id);
    lines.push_back(StrCat(job, r.info.name.empty() ? "" : StrCat(" (", r.info.name, ")"), " on ",
                           DescribeProvenance(r.device, r.software)));
  }
  return lines;
}

constexpr NameTable<Verdict, 4> kVerdicts = {{{Verdict::kFaster, "faster"},
                                              {Verdict::kSame, "same"},
                                              {Verdict::kSlower, "slower"},
                                              {Verdict::kUnresolved, "unresolved"}}};

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

std::string_view VerdictName(Verdict verdict) { return NameOf(kVerdicts, verdict); }

std::optional<Verdict> ParseVerdict(std::string_view name) { return ValueNamed(kVerdicts, name); }

Verdict Judge(double ratio, double low, double high, double threshold) {
  if (ratio > 1 + threshold) return low > 1 ? Verdict::kSlower : Verdict::kUnresolved;
  if (ratio < 1 / (1 + threshold)) return high < 1 ? Verdict::kFaster : Verdict::kUnresolved;
  // Same only when the noise cannot hide a change beyond the threshold.
  return low >= 1 / (1 + threshold) && high <= 1 + threshold ? Verdict::kSame
                                                             : Verdict::kUnresolved;
}

absl::StatusOr<CompareReport> CompareFilters(store::Store& db, const store::RunFilter& base,
                                             const store::RunFilter& now,
                                             const CompareQuery& query) {
  if (!(query.threshold >= 0 && query.threshold <= kMaxCompareThreshold)) {
    return absl::InvalidArgumentError(StrCat("threshold: must be between 0 and ",
                                             kMaxCompareThreshold, " (a fraction: 0.03 is 3%)"));
  }
  store::ReadSnapshot snapshot(db);  // both sides from one state of the database
  auto base_best = SelectSide(db, base, query, "base", query.base);
  if (!base_best.ok()) return base_best.status();
  auto now_best = SelectSide(db, now, query, "new", query.now);
  if (!now_best.ok()) return now_best.status();
  CompareReport report;
  report.query = query;
  // The GEMMs both sides answer from different runs, and those runs.
  std::vector<
      std::pair<const Key*, std::pair<const store::SelectedBest*, const store::SelectedBest*>>>
      pairs;
  std::set<store::RunKey> base_used, now_used;
  for (const auto& [key, b] : *base_best) {
    const auto found = now_best->find(key);
    if (found == now_best->end()) {
      ++report.only_base;
    } else if (found->second.best.run == b.best.run) {
      ++report.same_run;
    } else {
      pairs.push_back({&key, {&b, &found->second}});
      base_used.insert(b.best.run);
      now_used.insert(found->second.best.run);
    }
  }
  for (const auto& [key, n] : *now_best) report.only_now += base_best->contains(key) ? 0 : 1;
  std::set<store::RunKey> every = base_used;
  every.insert(now_used.begin(), now_used.end());
  auto runs = internal::DescribeEach(db, every);
  if (!runs.ok()) return runs.status();
  for (const auto& [key, sides] : pairs) {
    const auto& [b, n] = sides;
    GemmComparison c =
        CompareOne(*key, SideOf(*b, runs->at(b->best.run)), SideOf(*n, runs->at(n->best.run)),
                   !tuner::SameConfiguration(b->algo, n->algo), query);
    report.replayed = report.replayed || c.base.replayed || c.now.replayed;
    report.gemms.push_back(std::move(c));
  }
  std::stable_sort(
      report.gemms.begin(), report.gemms.end(),
      [](const GemmComparison& x, const GemmComparison& y) { return x.ratio > y.ratio; });
  std::vector<const GemmComparison*> all;
  for (const GemmComparison& c : report.gemms) all.push_back(&c);
  report.all = Summarise("all", all);
  report.by_alignment = GroupBy(report.gemms, &GemmComparison::alignment);
  if (!query.study_of.empty()) report.by_study = GroupBy(report.gemms, &GemmComparison::study);
  report.base_runs = DescribeRunsUsed(base_used, *runs);
  report.now_runs = DescribeRunsUsed(now_used, *runs);
  return report;
}

std::string DescribeGemm(const store::GemmKey& k) {
  return StrCat(k.batch > 1 ? StrCat(k.batch, "x") : "", k.m, "x", k.n, "x", k.k, " ",
                tuner::DTypeName(k.dtype), " ", k.Shape().Layout());
}

std::vector<std::string> SummarizeComparison(const CompareReport& r, size_t max_gemms) {
  const CompareGroup& a = r.all;
  std::vector<std::string> lines;
  lines.push_back(StrCat(r.replayed ? "REPLAYED (not measured): " : "", a.slower, " slower, ",
                         a.unresolved, " unresolved, ", a.same, " same, ", a.faster, " faster of ",
                         a.gemms, " GEMMs at threshold ", Decimals(r.query.threshold * 100, 1),
                         "%; geometric mean ratio ", Decimals(a.geomean_ratio, 4),
                         "; best algorithm changed for ", a.algo_changes));
  // Where the figures come from: each side's runs (device and software, or
  // the replayed table).
  constexpr size_t kRunsShown = 4;
  for (const auto& [label, runs] :
       {std::pair("base", &r.base_runs), std::pair("new", &r.now_runs)}) {
    for (size_t i = 0; i < runs->size() && i < kRunsShown; ++i) {
      lines.push_back(StrCat(label, " run: ", (*runs)[i]));
    }
    if (runs->size() > kRunsShown) {
      lines.push_back(StrCat("… and ", runs->size() - kRunsShown, " more ", label, " runs"));
    }
  }
  size_t shown = 0;
  for (const GemmComparison& c : r.gemms) {
    if (c.verdict != Verdict::kSlower || shown == max_gemms) continue;
    ++shown;
    lines.push_back(StrCat("slower: ", DescribeGemm(c.key), " ", Decimals(c.base.median_us, 1),
                           " -> ", Decimals(c.now.median_us, 1), " us, ratio ",
                           Decimals(c.ratio, 4), " (", Decimals(c.ratio_low, 4), "-",
                           Decimals(c.ratio_high, 4), ")"));
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
