#include "run_timer.h"

#include <algorithm>
#include <tuple>

#include "crest/common/str_cat.h"

namespace crest::answers::internal {
namespace {

std::vector<store::GemmKey> KeysOf(std::span<const GemmShape> gemms) {
  std::vector<store::GemmKey> keys;
  keys.reserve(gemms.size());
  for (const GemmShape& g : gemms) keys.push_back(store::GemmKey::Of(g));
  return keys;
}

double Low(const store::RunBest& b) { return b.ci_high_us > 0 ? b.ci_low_us : b.median_us; }
double High(const store::RunBest& b) { return b.ci_high_us > 0 ? b.ci_high_us : b.median_us; }

Timing PredictedTiming(double time_us, double expected_error, std::string version) {
  Timing t;
  t.time_us = time_us;
  // Within the model's expected error of each other: one tie.
  t.low_us = time_us * (1 - expected_error / 2);
  t.high_us = time_us * (1 + expected_error / 2);
  t.source = Source::kPredicted;
  t.provenance = std::move(version);
  return t;
}

}  // namespace

absl::Status RunTimer::Prefetch(std::span<const std::vector<GemmShape>> sets) {
  std::set<store::GemmKey> keys;
  for (const auto& set : sets) {
    for (const GemmShape& g : set) keys.insert(store::GemmKey::Of(g));
  }
  if (auto s = FetchRuns(keys); !s.ok()) return s;
  // The store's predictions, for the sets no measurement answers.
  std::vector<GemmShape> unanswered;
  for (const auto& set : sets) {
    auto choice = Choose(set);
    if (!choice.ok()) return choice.status();
    if (!choice->has_value()) unanswered.insert(unanswered.end(), set.begin(), set.end());
  }
  return FetchPredictions(unanswered);
}

absl::Status RunTimer::FetchRuns(const std::set<store::GemmKey>& keys) {
  std::vector<store::GemmKey> wanted;
  for (const auto& key : keys) {
    if (!fetched_.contains(key)) wanted.push_back(key);
  }
  if (wanted.empty()) return absl::OkStatus();
  auto bests = db_.RunBests(std::string(gpu_.name), wanted, options_.pin, options_.mode);
  if (!bests.ok()) return bests.status();
  fetched_.insert(wanted.begin(), wanted.end());
  std::vector<store::RunKey> unknown;
  for (auto& [key, runs] : *bests) {
    for (const store::RunBest& b : runs) {
      if (!runs_.contains(b.run) &&
          std::find(unknown.begin(), unknown.end(), b.run) == unknown.end()) {
        unknown.push_back(b.run);
      }
    }
    bests_[key] = std::move(runs);
  }
  if (unknown.empty()) return absl::OkStatus();
  auto records = db_.DescribeRuns(unknown);
  if (!records.ok()) return records.status();
  for (store::RunRecord& r : *records) runs_.emplace(r.key, std::move(r));
  return absl::OkStatus();
}

absl::Status RunTimer::FetchPredictions(std::span<const GemmShape> gemms) {
  // One query per model version (the dtype picks the calibration).
  std::map<std::string, std::vector<store::GemmKey>> by_version;
  for (const GemmShape& g : gemms) {
    const store::GemmKey key = store::GemmKey::Of(g);
    if (predictions_fetched_.insert(key).second) {
      by_version[ModelVersionFor(gpu_, g.dtype)].push_back(key);
    }
  }
  for (const auto& [version, keys] : by_version) {
    auto found = db_.FindPredictions(std::string(gpu_.name), version, keys);
    if (!found.ok()) return found.status();
    predictions_.merge(*found);
  }
  return absl::OkStatus();
}

bool RunTimer::Newer(const store::RunKey& a, const store::RunKey& b) const {
  const auto started = [&](const store::RunKey& k) {
    auto it = runs_.find(k);
    return it == runs_.end() ? int64_t{0} : it->second.info.started_us;
  };
  return std::tuple(started(a), a) > std::tuple(started(b), b);
}

std::optional<RunTimer::Choice> RunTimer::Latest(const std::vector<store::GemmKey>& keys) const {
  // The runs that measured the first key, newest first; the first of them
  // that measured every other key answers.
  std::vector<store::RunKey> runs;
  for (const store::RunBest& b : bests_.at(keys.front())) runs.push_back(b.run);
  std::sort(runs.begin(), runs.end(),
            [&](const store::RunKey& a, const store::RunKey& b) { return Newer(a, b); });
  for (const store::RunKey& run : runs) {
    Choice c;
    for (const store::GemmKey& key : keys) {
      const auto& of_key = bests_.at(key);
      auto it = std::find_if(of_key.begin(), of_key.end(),
                             [&](const store::RunBest& b) { return b.run == run; });
      if (it == of_key.end()) break;
      c.bests.push_back(*it);
    }
    if (c.bests.size() == keys.size()) {
      c.runs.push_back(&runs_.at(run));
      return c;
    }
  }
  return std::nullopt;
}

RunTimer::Choice RunTimer::Pooled(const std::vector<store::GemmKey>& keys) const {
  Choice c;
  for (const store::GemmKey& key : keys) {
    std::vector<store::RunBest> of_key = bests_.at(key);
    std::sort(of_key.begin(), of_key.end(), [](const store::RunBest& a, const store::RunBest& b) {
      return std::tuple(a.median_us, a.run) < std::tuple(b.median_us, b.run);
    });
    const size_t mid = (of_key.size() - 1) / 2;
    c.bests.push_back(of_key[mid]);
    c.pooled_us.push_back(of_key.size() % 2 == 1
                              ? of_key[mid].median_us
                              : (of_key[mid].median_us + of_key[mid + 1].median_us) / 2);
    double low = Low(of_key.front());
    double high = High(of_key.front());
    for (const store::RunBest& b : of_key) {
      low = std::min(low, Low(b));
      high = std::max(high, High(b));
      const store::RunRecord* run = &runs_.at(b.run);
      if (std::find(c.runs.begin(), c.runs.end(), run) == c.runs.end()) c.runs.push_back(run);
    }
    c.pool.emplace_back(low, high);
  }
  c.pooled = c.runs.size() > 1;  // one run alone is that run's answer
  return c;
}

absl::StatusOr<std::optional<RunTimer::Choice>> RunTimer::Choose(std::span<const GemmShape> set) {
  if (set.empty()) return std::nullopt;
  const std::vector<store::GemmKey> keys = KeysOf(set);
  if (auto s = FetchRuns(std::set<store::GemmKey>(keys.begin(), keys.end())); !s.ok()) return s;
  for (const store::GemmKey& key : keys) {
    if (!bests_.contains(key)) return std::nullopt;  // never measured
  }
  if (options_.runs == RunChoice::kAll) return Pooled(keys);
  return Latest(keys);
}

Timing RunTimer::MeasuredTiming(const Choice& c, size_t i) const {
  const store::RunBest& b = c.bests[i];
  const store::RunRecord& run = runs_.at(b.run);
  Timing t;
  t.time_us = c.pooled ? c.pooled_us[i] : b.median_us;
  t.low_us = c.pooled ? c.pool[i].first : Low(b);
  t.high_us = c.pooled ? c.pool[i].second : High(b);
  t.source = Source::kMeasured;
  t.device = run.device;
  t.software = run.software;
  const std::string mode = StrCat(CacheModeName(options_.mode.cache), " L2, ",
                                  ClockPolicyName(options_.mode.clocks), " clocks");
  t.provenance = StrCat(DescribeProvenance(run.device, run.software), "; ", mode);
  for (const store::RunRecord* r : c.runs) t.runs.push_back(r->info);
  t.pooled = c.pooled;
  return t;
}

absl::StatusOr<std::vector<Timing>> RunTimer::Time(std::span<const GemmShape> set) {
  auto choice = Choose(set);
  if (!choice.ok()) return choice.status();
  if (!choice->has_value()) {
    const std::vector<store::GemmKey> keys = KeysOf(set);
    const bool all_measured = std::all_of(keys.begin(), keys.end(),
                                          [&](const store::GemmKey& k) { return bests_.contains(k); });
    if (all_measured && !keys.empty()) ++across_runs_;
    return Predicted(set);
  }
  std::vector<Timing> out;
  out.reserve(set.size());
  for (size_t i = 0; i < set.size(); ++i) out.push_back(MeasuredTiming(**choice, i));
  return out;
}

absl::StatusOr<std::vector<Timing>> RunTimer::Predicted(std::span<const GemmShape> set) {
  if (auto s = FetchPredictions(set); !s.ok()) return s;
  std::vector<Timing> out;
  out.reserve(set.size());
  for (const GemmShape& g : set) {
    if (auto it = predictions_.find(store::GemmKey::Of(g)); it != predictions_.end()) {
      out.push_back(PredictedTiming(it->second.time_us, it->second.expected_error,
                                    it->second.model_version));
      continue;
    }
    auto live = crest::Predict(g, gpu_);  // the same model version, run now
    if (!live.ok()) return absl::NotFoundError(live.status().message());
    out.push_back(PredictedTiming(live->time_us, live->expected_error,
                                  std::string(live->model_version)));
  }
  return out;
}

}  // namespace crest::answers::internal
