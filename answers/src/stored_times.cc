#include "stored_times.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "crest/tuner/timing_ops.h"

namespace crest::answers::internal {
namespace {

// A run's best as a measured time: its median and interval.
tuner::Timing BestTiming(const store::RunBest& b) {
  return tuner::MeasuredTiming(b.median_us, b.ci_low_us, b.ci_high_us);
}

// The i-th GEMM's figures in a choice: its run's best, or the pool's.
struct Figures {
  double median_us = 0, low_us = 0, high_us = 0;
};
Figures FiguresOf(const StoredTimes::Choice& c, size_t i) {
  if (c.pooled) return {c.pooled_us[i], c.pool[i].first, c.pool[i].second};
  const store::RunBest& b = c.bests[i];
  return {b.median_us, b.ci_low_us, b.ci_high_us};
}

// The keys of the sets' GEMMs, set after set.
std::vector<store::GemmKey> KeysOfSets(std::span<const std::span<const tuner::GemmShape>> sets) {
  size_t gemms = 0;
  for (const auto& set : sets) gemms += set.size();
  std::vector<store::GemmKey> keys;
  keys.reserve(gemms);
  for (const auto& set : sets) {
    for (const tuner::GemmShape& g : set) keys.push_back(store::GemmKey::Of(g));
  }
  return keys;
}

std::vector<store::GemmKey> KeysOf(std::span<const tuner::GemmShape> gemms) {
  return KeysOfSets({&gemms, 1});
}

bool Newer(const store::RunBest& a, const store::RunBest& b) {
  return std::tuple(a.started_us, a.run) > std::tuple(b.started_us, b.run);
}

}  // namespace

absl::Status StoredTimes::LoadVersions() {
  if (versions_) return absl::OkStatus();
  auto ids = db_.SoftwareVersions(options_.pin);
  if (!ids.ok()) return ids.status();
  versions_.emplace();
  for (int64_t id : *ids) versions_->push_back({id, {}, {}, std::nullopt});
  return absl::OkStatus();
}

absl::Status StoredTimes::Prefetch(const tuner::GemmSets& sets) {
  if (auto s = LoadVersions(); !s.ok()) return s;
  // Version by version, newest first, the runs of the sets not yet answered.
  OpenSets open;
  chosen_.reserve(chosen_.size() + sets.size());
  chosen_at_.reserve(chosen_at_.size() + sets.size());
  for (const auto& set : sets) {
    if (set.empty()) continue;
    if (!chosen_at_.try_emplace(set.data(), chosen_.size()).second) continue;
    Chosen& chosen = chosen_.emplace_back();
    chosen.size = set.size();
    chosen.first = store::GemmKey::Of(set.front());
    open.push_back(set);
  }
  for (Version& version : *versions_) {
    std::vector<store::GemmKey> keys = KeysOfSets(open);
    const size_t asked = open.size();
    if (auto s = ChooseFromNewestRuns(version, open, keys); !s.ok()) return s;
    if (open.empty()) break;
    if (open.size() != asked) keys = KeysOfSets(open);
    if (auto s = ReadRuns(version, keys); !s.ok()) return s;
    OpenSets still_open;
    size_t next = 0;  // the set's first key
    for (const auto& set : open) {
      Chosen& chosen = ChosenOf(set);
      bool whole = false;
      chosen.choice = ChooseIn(version, std::span(keys).subspan(next, set.size()), whole);
      next += set.size();
      if (chosen.choice) continue;
      chosen.across_runs = chosen.across_runs || whole;
      still_open.push_back(set);
    }
    open = std::move(still_open);
  }
  // The store's predictions for the sets no measurement answers, in a few
  // queries; Predicted reads what else it needs.
  std::vector<store::GemmKey> unanswered;
  for (const auto& set : sets) {
    if (set.empty()) continue;
    Chosen& chosen = ChosenOf(set);
    if (chosen.choice || chosen.predictions_read) continue;
    chosen.predictions_read = true;
    for (const tuner::GemmShape& g : set) unanswered.push_back(store::GemmKey::Of(g));
  }
  return ReadPredictions(unanswered);
}

absl::Status StoredTimes::ChooseFromNewestRuns(Version& version, OpenSets& open,
                                               std::span<const store::GemmKey> keys) {
  // A set no one of these answers is read whole (every run) after them:
  // the runs listed may be other windows'.
  constexpr size_t kNewestRunsTried = 4;
  if (options_.runs != RunChoice::kLatest || open.empty()) return absl::OkStatus();
  if (!version.runs) {
    auto runs = db_.ListRuns(std::string(gpu_.name), version.software_id, options_.mode);
    if (!runs.ok()) return runs.status();
    version.runs = std::move(*runs);
  }
  std::vector<store::RunKey> newest;
  for (size_t i = 0; i < version.runs->size() && i < kNewestRunsTried; ++i) {
    newest.push_back((*version.runs)[i].run);
  }
  if (newest.empty()) return absl::OkStatus();
  // Every run tried is asked for the GEMMs of all the sets open at the
  // start (one batch of keys for all the runs); a set the run answers whole
  // is closed, and later runs' answers for it unread.
  std::vector<size_t> first_key;  // open[i]'s first GEMM in keys
  first_key.reserve(open.size());
  size_t next = 0;
  for (const auto& set : open) {
    first_key.push_back(next);
    next += set.size();
  }
  std::vector<size_t> waiting(open.size());  // the sets still open, by index
  std::iota(waiting.begin(), waiting.end(), size_t{0});
  auto read = db_.ForEachRunBests(
      std::string(gpu_.name), newest, keys, options_.mode, options_.algo,
      [&](size_t r, std::span<const store::RunBest* const> bests) {
        std::erase_if(waiting, [&](size_t i) {
          return TakeRun(open[i], newest[r], bests.subspan(first_key[i], open[i].size()));
        });
        return !waiting.empty();
      });
  if (!read.ok()) return read;
  OpenSets still_open;
  still_open.reserve(waiting.size());
  for (size_t i : waiting) still_open.push_back(open[i]);
  open = std::move(still_open);
  return absl::OkStatus();
}

bool StoredTimes::TakeRun(std::span<const tuner::GemmShape> set, const store::RunKey& run,
                          std::span<const store::RunBest* const> bests) {
  if (std::find(bests.begin(), bests.end(), nullptr) != bests.end()) return false;
  Choice c(&arena_);
  c.bests.reserve(bests.size());
  for (const auto& b : bests) c.bests.push_back(*b);
  c.runs.push_back(run);
  ChosenOf(set).choice.emplace(std::move(c));  // moved, it keeps the arena
  return true;
}

const StoredTimes::Chosen* StoredTimes::Prefetched(std::span<const tuner::GemmShape> set) const {
  if (set.empty()) return nullptr;
  auto it = chosen_at_.find(set.data());
  if (it == chosen_at_.end()) return nullptr;
  const Chosen& chosen = chosen_[it->second];
  if (chosen.size != set.size() || !(chosen.first == store::GemmKey::Of(set.front()))) {
    return nullptr;
  }
  return &chosen;
}

absl::Status StoredTimes::ReadRuns(Version& version, std::span<const store::GemmKey> keys) {
  auto bests =
      db_.RunBests(std::string(gpu_.name), keys, version.software_id, options_.mode, options_.algo);
  if (!bests.ok()) return bests.status();
  for (auto& [key, runs] : *bests) {
    std::sort(runs.begin(), runs.end(), Newer);
    version.bests[key] = std::move(runs);
  }
  return absl::OkStatus();
}

absl::Status StoredTimes::FetchRuns(Version& version, std::span<const store::GemmKey> keys) {
  std::vector<store::GemmKey> wanted;
  for (const auto& key : keys) {
    if (!version.bests.contains(key) && version.fetched.insert(key).second) wanted.push_back(key);
  }
  if (wanted.empty()) return absl::OkStatus();
  return ReadRuns(version, wanted);
}

absl::Status StoredTimes::ReadPredictions(std::span<const store::GemmKey> keys) {
  // One query per model version (the dtype picks the calibration).
  std::map<std::string, std::vector<store::GemmKey>> by_version;
  for (const store::GemmKey& key : keys) {
    by_version[tuner::ModelVersionFor(gpu_, key.dtype)].push_back(key);
  }
  for (const auto& [version, of_version] : by_version) {
    auto found = db_.FindPredictions(std::string(gpu_.name), version, of_version);
    if (!found.ok()) return found.status();
    predictions_.merge(*found);
  }
  return absl::OkStatus();
}

absl::Status StoredTimes::FetchPredictions(std::span<const tuner::GemmShape> gemms) {
  std::vector<store::GemmKey> unread;
  for (const tuner::GemmShape& g : gemms) {
    const store::GemmKey key = store::GemmKey::Of(g);
    if (predictions_fetched_.insert(key).second) unread.push_back(key);
  }
  return ReadPredictions(unread);
}

absl::StatusOr<const store::RunRecord*> StoredTimes::Run(const store::RunKey& run) {
  if (last_run_ != nullptr && last_run_->first == run) return &last_run_->second;
  if (auto it = runs_.find(run); it != runs_.end()) {
    last_run_ = &*it;
    return &it->second;
  }
  auto records = db_.DescribeRuns({&run, 1});
  if (!records.ok()) return records.status();
  last_run_ = &*runs_.emplace(run, std::move(records->front())).first;
  return &last_run_->second;
}

std::optional<StoredTimes::Choice> StoredTimes::ChooseIn(const Version& version,
                                                         std::span<const store::GemmKey> keys,
                                                         bool& whole) const {
  whole = std::all_of(keys.begin(), keys.end(),
                      [&](const store::GemmKey& k) { return version.bests.contains(k); });
  if (!whole) return std::nullopt;
  if (options_.runs == RunChoice::kAll) return Pooled(version, keys);
  return Latest(version, keys);
}

std::optional<StoredTimes::Choice> StoredTimes::Latest(const Version& version,
                                                       std::span<const store::GemmKey> keys) {
  // The runs that measured the first key, newest first; the first of them
  // that measured every other key answers. A key's runs are newest first,
  // and a run's start is its job's: found by binary search.
  for (const store::RunBest& first : version.bests.at(keys.front())) {
    Choice c;
    c.bests.push_back(first);
    for (size_t i = 1; i < keys.size(); ++i) {
      const auto& of_key = version.bests.at(keys[i]);
      auto it = std::lower_bound(of_key.begin(), of_key.end(), first, Newer);
      if (it == of_key.end() || !(it->run == first.run)) break;
      c.bests.push_back(*it);
    }
    if (c.bests.size() == keys.size()) {
      c.runs.push_back(first.run);
      return c;
    }
  }
  return std::nullopt;
}

StoredTimes::Choice StoredTimes::Pooled(const Version& version,
                                        std::span<const store::GemmKey> keys) {
  Choice c;
  std::set<store::RunKey> seen;  // c.runs, in the order first met
  for (const store::GemmKey& key : keys) {
    std::vector<store::RunBest> of_key = version.bests.at(key);
    std::sort(of_key.begin(), of_key.end(), [](const store::RunBest& a, const store::RunBest& b) {
      return std::tuple(a.median_us, a.run) < std::tuple(b.median_us, b.run);
    });
    const size_t mid = (of_key.size() - 1) / 2;
    c.bests.push_back(of_key[mid]);
    c.pooled_us.push_back(of_key.size() % 2 == 1
                              ? of_key[mid].median_us
                              : (of_key[mid].median_us + of_key[mid + 1].median_us) / 2);
    double low = std::numeric_limits<double>::infinity();
    double high = 0;
    for (const store::RunBest& b : of_key) {
      const tuner::Timing t = BestTiming(b);
      low = std::min(low, t.low_us);
      high = std::max(high, t.high_us);
      if (seen.insert(b.run).second) c.runs.push_back(b.run);
    }
    c.pool.emplace_back(low, high);
  }
  c.pooled = c.runs.size() > 1;  // one run alone is that run's answer
  return c;
}

absl::StatusOr<const StoredTimes::Choice*> StoredTimes::ChoiceOf(
    std::span<const tuner::GemmShape> set, bool* across_runs, std::optional<Choice>& made) {
  if (across_runs != nullptr) *across_runs = false;
  if (set.empty()) return nullptr;
  if (const Chosen* chosen = Prefetched(set)) {
    if (across_runs != nullptr) *across_runs = chosen->across_runs;
    return chosen->choice ? &*chosen->choice : nullptr;
  }
  std::vector<store::GemmKey> keys = KeysOf(set);
  if (auto s = LoadVersions(); !s.ok()) return s;
  // A set timed alone (a lookup, a baseline) is a few keys: all their runs
  // are read, as listing the runs would cost more than they do.
  for (Version& version : *versions_) {
    if (auto s = FetchRuns(version, keys); !s.ok()) return s;
    bool whole = false;
    if (auto choice = ChooseIn(version, keys, whole)) {
      made = std::move(choice);
      return &*made;
    }
    if (whole && across_runs != nullptr) *across_runs = true;
  }
  return nullptr;
}

absl::StatusOr<std::optional<StoredTimes::Choice>> StoredTimes::Choose(
    std::span<const tuner::GemmShape> set, bool* across_runs) {
  std::optional<Choice> made;
  auto choice = ChoiceOf(set, across_runs, made);
  if (!choice.ok()) return choice.status();
  if (made) return made;
  if (*choice == nullptr) return std::nullopt;
  return **choice;  // a prefetched one, copied for the caller
}

absl::StatusOr<std::vector<tuner::RunInfo>> StoredTimes::RunsOf(const Choice& c) {
  std::vector<tuner::RunInfo> runs;
  for (const store::RunKey& key : c.runs) {
    auto run = Run(key);
    if (!run.ok()) return run.status();
    runs.push_back((*run)->info);
  }
  return runs;
}

const std::string& StoredTimes::Provenance(const store::RunKey& key, const store::RunRecord& run) {
  std::string& provenance = provenance_[key];
  if (provenance.empty()) provenance = DescribeMeasurement(run.device, run.software, options_.mode);
  return provenance;
}

absl::StatusOr<StoredTimes::Part> StoredTimes::PartOf(const Choice& c, size_t i) {
  const store::RunBest& b = c.bests[i];
  auto run = Run(b.run);
  if (!run.ok()) return run.status();
  const Figures f = FiguresOf(c, i);
  return Part{*run, &Provenance(b.run, **run), f.median_us, f.low_us, f.high_us};
}

absl::StatusOr<std::vector<tuner::Timing>> StoredTimes::Measured(const Choice& c) {
  auto runs = RunsOf(c);
  if (!runs.ok()) return runs.status();
  std::vector<tuner::Timing> out;
  out.reserve(c.bests.size());
  for (size_t i = 0; i < c.bests.size(); ++i) {
    auto p = PartOf(c, i);
    if (!p.ok()) return p.status();
    tuner::Timing t = tuner::MeasuredTiming(p->median_us, p->low_us, p->high_us, p->run->device,
                                            p->run->software);
    t.provenance = *p->provenance;
    t.runs = *runs;
    t.pooled = c.pooled;
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<tuner::SetSum> StoredTimes::MeasuredSum(const Choice& c) {
  // SumTimings(Measured(c)) without a Timing per part: a part's run is
  // looked up when it changes (one run answers a set, but for a pool), and
  // the labels are the first part's run's and the choice's runs, shared.
  tuner::SetSum sum;
  if (c.bests.empty()) return sum;  // as SumTimings of no part
  const store::RunKey* part_run = nullptr;
  const store::RunRecord* first = nullptr;
  tuner::Source source = tuner::Source::kUnknown;  // the part's run's kind
  for (size_t i = 0; i < c.bests.size(); ++i) {
    const store::RunKey& run = c.bests[i].run;
    if (part_run == nullptr || !(*part_run == run)) {
      auto found = Run(run);
      if (!found.ok()) return found.status();
      part_run = &run;
      source = tuner::MeasuredSource((*found)->device);
      if (i == 0) first = *found;
    }
    const Figures f = FiguresOf(c, i);
    tuner::AddMeasured(sum, f.median_us, f.low_us, f.high_us, source, c.pooled, i == 0);
  }
  auto labels = LabelsOf(c, c.bests.front().run, *first);
  if (!labels.ok()) return labels.status();
  sum.labels = *std::move(labels);
  return sum;
}

absl::StatusOr<std::shared_ptr<const tuner::TimingLabels>> StoredTimes::LabelsOf(
    const Choice& c, const store::RunKey& first, const store::RunRecord& record) {
  const LabelsKeyView wanted{first, c.runs};
  if (last_labels_ != nullptr && !LabelsKeyLess()(wanted, last_labels_->first) &&
      !LabelsKeyLess()(last_labels_->first, wanted)) {
    return last_labels_->second;
  }
  if (auto it = labels_.find(wanted); it != labels_.end()) {
    last_labels_ = &*it;
    return it->second;
  }
  auto labels = std::make_shared<tuner::TimingLabels>();
  labels->provenance = Provenance(first, record);
  labels->device = record.device;
  labels->software = record.software;
  for (const store::RunKey& key : c.runs) {
    auto found = Run(key);
    if (!found.ok()) return found.status();
    tuner::MergeRuns(labels->runs, {&(*found)->info, 1});
  }
  LabelsKey key{first, {c.runs.begin(), c.runs.end()}};
  last_labels_ = &*labels_.emplace(std::move(key), std::move(labels)).first;
  return last_labels_->second;
}

absl::StatusOr<tuner::SetSum> StoredTimes::Sum(std::span<const tuner::GemmShape> set) {
  bool across_runs = false;
  std::optional<Choice> made;
  auto choice = ChoiceOf(set, &across_runs, made);
  if (!choice.ok()) return choice.status();
  if (*choice != nullptr) return MeasuredSum(**choice);
  if (across_runs) ++across_runs_;
  auto parts = Predicted(set);
  if (!parts.ok()) return parts.status();
  return tuner::SetSumOf(tuner::SumTimings(*parts));
}

absl::StatusOr<std::vector<tuner::Timing>> StoredTimes::Time(
    std::span<const tuner::GemmShape> set) {
  bool across_runs = false;
  std::optional<Choice> made;
  auto choice = ChoiceOf(set, &across_runs, made);
  if (!choice.ok()) return choice.status();
  if (*choice != nullptr) return Measured(**choice);
  if (across_runs) ++across_runs_;
  return Predicted(set);
}

absl::StatusOr<std::vector<tuner::Timing>> StoredTimes::Predicted(
    std::span<const tuner::GemmShape> set) {
  const Chosen* chosen = Prefetched(set);
  if (chosen == nullptr || !chosen->predictions_read) {
    if (auto s = FetchPredictions(set); !s.ok()) return s;
  }
  std::vector<tuner::Timing> out;
  out.reserve(set.size());
  for (const tuner::GemmShape& g : set) {
    if (auto it = predictions_.find(store::GemmKey::Of(g)); it != predictions_.end()) {
      out.push_back(tuner::PredictedTiming(it->second.time_us, it->second.expected_error,
                                           it->second.model_version));
      continue;
    }
    auto live = crest::tuner::Predict(g, gpu_);  // the same model version, run now
    if (!live.ok()) return absl::NotFoundError(live.status().message());
    out.push_back(tuner::PredictedTiming(live->time_us, live->expected_error,
                                         std::string(live->model_version)));
  }
  return out;
}

}  // namespace crest::answers::internal
