// Each run's bests: what answers that sum GEMMs of one run read.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "key_scan.h"
#include "run_packs.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

// When each run's job started (its created_us; 0 outside a job, or for a
// job no longer in the database): a few jobs, however many rows.
class JobStarts {
 public:
  explicit JobStarts(Connection& conn) : conn_(conn) {}
  absl::StatusOr<int64_t> Of(int64_t job_id) {
    if (job_id == 0) return 0;
    auto [it, added] = started_.try_emplace(job_id, 0);
    if (!added) return it->second;
    if (stmt_ == nullptr) {
      auto prepared = conn_.Prepare("SELECT created_us FROM jobs WHERE id = ?1");
      if (!prepared.ok()) return prepared.status();
      stmt_ = *prepared;
    }
    auto found = stmt_->Reset().Bind(1, job_id).Step("reading a job's start");
    if (!found.ok()) return found.status();
    if (*found) it->second = stmt_->Int("created_us");
    stmt_->Reset();
    return it->second;
  }

 private:
  Connection& conn_;
  Statement* stmt_ = nullptr;  // the connection's
  std::map<int64_t, int64_t> started_;
};

// The id run_ids gives `run` (in `gpu_model` and `mode`); nullopt when it
// has none, i.e. no row in run_bests was ever of it.
absl::StatusOr<std::optional<int64_t>> RunIdOf(Connection& conn, const std::string& gpu_model,
                                               const RunKey& run, const tuner::MeasureMode& mode) {
  auto stmt = conn.Prepare(
      "SELECT id FROM run_ids WHERE gpu_model = ?1 AND cache_mode = ?2 AND clock_policy = ?3 "
      "AND software_id = ?4 AND job_id = ?5 AND device_id = ?6");
  if (!stmt.ok()) return stmt.status();
  Statement& s = (*stmt)->Reset();
  s.Bind(1, gpu_model).Bind(2, tuner::CacheModeName(mode.cache));
  s.Bind(3, tuner::ClockPolicyName(mode.clocks)).Bind(4, run.software_id);
  s.Bind(5, run.job_id).Bind(6, run.device_id);
  auto found = s.Step("looking up a run's id");
  if (!found.ok()) return found.status();
  std::optional<int64_t> id;
  if (*found) id = s.IntAt(0);
  s.Reset();
  return id;
}

// Where RunBests reads a run's rows: run_bests (kBest), else cuBLASLt's
// first choice in measurements, which a run may have recorded more than
// once. `columns`: each row's run (job_id, device_id; not for one run,
// which the query binds) and its figures, as ReadFigures reads them. One
// run's best rows (ReadRunBests) are read from run_rows by the run's id
// (?15), run_bests' rows keyed by run; its first choices (?15, ?16: job
// and device) from measurements.
struct RunRows {
  const char* columns;
  const char* from_where;
};

RunRows RowsOf(tuner::AlgoChoice algo, bool one_run) {
  constexpr const char* kBestColumns =
      "job_id, device_id, measurement_id, median_us, ci_low_us, ci_high_us";
  constexpr const char* kBestColumnsOfRun = "measurement_id, median_us, ci_low_us, ci_high_us";
  constexpr const char* kFirstChoiceColumns =
      "coalesce(job_id, 0) AS job_id, device_id, id AS measurement_id, median_us, ci_low_us, "
      "ci_high_us";
  constexpr const char* kFirstChoiceColumnsOfRun =
      "id AS measurement_id, median_us, ci_low_us, ci_high_us";
  constexpr const char* kBest =
      "FROM run_bests WHERE gpu_model = ?1 AND cache_mode = ?2 AND clock_policy = ?13 AND "
      "software_id = ?14";
  constexpr const char* kBestOfRun = "FROM run_rows WHERE run_id = ?15";
  constexpr const char* kFirstChoice =
      "FROM measurements WHERE gpu_model = ?1 AND cache_mode = ?2 AND clock_policy = ?13 AND "
      "software_id = ?14 AND verified = 1 AND heuristic_rank = 0";
  constexpr const char* kFirstChoiceOfRun =
      "FROM measurements WHERE gpu_model = ?1 AND cache_mode = ?2 AND clock_policy = ?13 AND "
      "software_id = ?14 AND verified = 1 AND heuristic_rank = 0 AND coalesce(job_id, 0) = ?15 "
      "AND device_id = ?16";
  if (algo == tuner::AlgoChoice::kBest) {
    return one_run ? RunRows{kBestColumnsOfRun, kBestOfRun} : RunRows{kBestColumns, kBest};
  }
  return one_run ? RunRows{kFirstChoiceColumnsOfRun, kFirstChoiceOfRun}
                 : RunRows{kFirstChoiceColumns, kFirstChoice};
}

void BindRunBests(Statement& s, const std::string& gpu_model, int64_t software_id,
                  const tuner::MeasureMode& mode) {
  s.Bind(1, gpu_model).Bind(2, tuner::CacheModeName(mode.cache));
  s.Bind(13, tuner::ClockPolicyName(mode.clocks)).Bind(14, software_id);
}

// The figures' columns in a ScanRanges row: after v, and after the run's
// two columns where the rows name it.
constexpr int kFiguresOfRun = 1;
constexpr int kFiguresOfAnyRun = 3;

// A row's figures from column `first` on, in the columns' order (by place:
// by name was a twentieth of a ranking).
RunBest ReadFigures(const Statement& s, const RunKey& run, int first) {
  RunBest b;
  b.run = run;
  b.measurement_id = s.IntAt(first);
  b.median_us = s.DoubleAt(first + 1);
  b.ci_low_us = s.DoubleAt(first + 2);
  b.ci_high_us = s.DoubleAt(first + 3);
  return b;
}

// A packed row's figures, as ReadFigures reads a row's.
RunBest FromPack(const PackedRow& row, const RunKey& run) {
  RunBest b;
  b.run = run;
  b.measurement_id = row.measurement_id;
  b.median_us = row.median_us;
  b.ci_low_us = row.ci_low_us;
  b.ci_high_us = row.ci_high_us;
  return b;
}

}  // namespace

absl::StatusOr<std::map<GemmKey, std::vector<RunBest>>> SqliteStore::RunBests(
    const std::string& gpu_model, std::span<const GemmKey> keys, int64_t software_id,
    const tuner::MeasureMode& mode, tuner::AlgoChoice algo) {
  const std::vector<GemmKey> wanted = SortedUnique(keys);
  std::vector<std::vector<RunBest>> found(wanted.size());
  const RunRows rows = RowsOf(algo, /*one_run=*/false);
  auto status = ScanKeyRanges(
      *conn_, rows.columns, rows.from_where, wanted,
      [&](Statement& s) { BindRunBests(s, gpu_model, software_id, mode); },
      [&](size_t i, const Statement& s) {
        const RunKey run{s.IntAt(1), s.IntAt(2), software_id};  // job_id, device_id
        found[i].push_back(ReadFigures(s, run, kFiguresOfAnyRun));
      },
      "looking up each run's measurements");
  if (!status.ok()) return status;
  std::map<GemmKey, std::vector<RunBest>> out;
  JobStarts starts(*conn_);
  for (size_t i = 0; i < wanted.size(); ++i) {
    std::vector<RunBest>& runs = found[i];
    if (runs.empty()) continue;
    // One row per run: the fastest. run_bests has one already; a run's
    // first choice may have been recorded more than once.
    if (algo != tuner::AlgoChoice::kBest) {
      std::sort(runs.begin(), runs.end(), [](const RunBest& a, const RunBest& b) {
        return std::tie(a.run, a.median_us) < std::tie(b.run, b.median_us);
      });
      runs.erase(std::unique(runs.begin(), runs.end(),
                             [](const RunBest& a, const RunBest& b) { return a.run == b.run; }),
                 runs.end());
    }
    for (RunBest& b : runs) {
      auto started = starts.Of(b.run.job_id);
      if (!started.ok()) return started.status();
      b.started_us = *started;
    }
    out.emplace_hint(out.end(), wanted[i], std::move(runs));
  }
  return out;
}

absl::Status SqliteStore::ForEachRunBests(const std::string& gpu_model,
                                          std::span<const RunKey> runs,
                                          std::span<const GemmKey> keys,
                                          const tuner::MeasureMode& mode, tuner::AlgoChoice algo,
                                          TakeRunBests take) {
  BatchedKeys unkept;
  const BatchedKeys& batched = Batched(keys, unkept);
  const std::vector<uint32_t>& slot_of = batched.wanted.slot_of;
  std::vector<std::optional<RunBest>> found(batched.wanted.keys.size());
  std::vector<const RunBest*> bests(keys.size());  // into found
  JobStarts starts(*conn_);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::fill(found.begin(), found.end(), std::nullopt);
    auto read = ReadRunBests(gpu_model, runs[r], batched.ranges, mode, algo, found);
    if (!read.ok()) return read;
    auto started = starts.Of(runs[r].job_id);
    if (!started.ok()) return started.status();
    for (std::optional<RunBest>& best : found) {
      if (best) best->started_us = *started;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::optional<RunBest>& best = found[slot_of[i]];
      bests[i] = best ? &*best : nullptr;
    }
    if (!take(r, bests)) break;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::ReadRunBests(const std::string& gpu_model, const RunKey& run,
                                       std::span<const KeyRange> ranges,
                                       const tuner::MeasureMode& mode, tuner::AlgoChoice algo,
                                       std::vector<std::optional<RunBest>>& found) {
  std::optional<int64_t> run_id;  // kBest reads the run's rows by its id
  if (algo == tuner::AlgoChoice::kBest) {
    auto id = RunIdOf(*conn_, gpu_model, run, mode);
    if (!id.ok()) return id.status();
    if (!*id) return absl::OkStatus();  // no row of the run
    run_id = *id;
  }
  const auto keep = [&found](size_t i, const RunBest& b) {
    if (!found[i] || b.median_us < found[i]->median_us) found[i] = b;  // the fastest row
  };
  const RunRows rows = RowsOf(algo, /*one_run=*/true);
  for (const KeyRange& range : ranges) {
    // A packed line is one blob (run_packs.h); the rest are rows.
    if (run_id && range.varying >= 0) {
      size_t next = 0;  // the pack's rows come in ascending v
      auto packed = ForEachPackedRow(*conn_, *run_id, range, [&](const PackedRow& row) {
        const int64_t slot = range.SlotAt(row.v, next);
        if (slot >= 0) keep(static_cast<size_t>(slot), FromPack(row, run));
      });
      if (!packed.ok()) return packed.status();
      if (*packed) continue;
    }
    auto status = ScanRanges(
        *conn_, rows.columns, rows.from_where, {&range, 1},
        [&](Statement& s) {
          if (run_id) {
            s.Bind(15, *run_id);
            return;
          }
          BindRunBests(s, gpu_model, run.software_id, mode);
          s.Bind(15, run.job_id).Bind(16, run.device_id);
        },
        [&](size_t i, const Statement& s) { keep(i, ReadFigures(s, run, kFiguresOfRun)); },
        "looking up a run's measurements");
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

const SqliteStore::BatchedKeys& SqliteStore::Batched(std::span<const GemmKey> keys,
                                                     BatchedKeys& unkept) {
  if (!batched_.asked.empty() &&
      std::equal(keys.begin(), keys.end(), batched_.asked.begin(), batched_.asked.end())) {
    return batched_;
  }
  const bool kept = keys.size() <= kMaxKeptKeys;
  BatchedKeys& b = kept ? batched_ : unkept;
  if (kept) b.asked.assign(keys.begin(), keys.end());  // what the next call is compared with
  b.wanted = Want(keys);
  b.ranges = BatchKeys(b.wanted.keys);
  return b;
}

absl::StatusOr<std::vector<RunBest>> SqliteStore::ListRuns(const std::string& gpu_model,
                                                           int64_t software_id,
                                                           const tuner::MeasureMode& mode) {
  // run_ids' unique index holds a software version's runs in (job,
  // device) order; a run whose rows all went is not one.
  auto stmt = conn_->Prepare(
      "SELECT job_id, device_id FROM run_ids WHERE gpu_model = ?1 AND cache_mode = ?2 AND "
      "clock_policy = ?3 AND software_id = ?4 AND "
      "EXISTS (SELECT 1 FROM run_rows WHERE run_id = run_ids.id)");
  if (!stmt.ok()) return stmt.status();
  Statement& s = (*stmt)->Reset();
  s.Bind(1, gpu_model).Bind(2, tuner::CacheModeName(mode.cache));
  s.Bind(3, tuner::ClockPolicyName(mode.clocks)).Bind(4, software_id);
  std::vector<RunBest> runs;
  auto listed = s.ForEachRow("listing runs", [&](const Statement& row) {
    RunBest run;
    run.run = RunKey{row.IntAt(0), row.IntAt(1), software_id};
    runs.push_back(run);
  });
  if (!listed.ok()) return listed;
  JobStarts starts(*conn_);
  for (RunBest& run : runs) {
    auto started = starts.Of(run.run.job_id);
    if (!started.ok()) return started.status();
    run.started_us = *started;
  }
  std::sort(runs.begin(), runs.end(), [](const RunBest& a, const RunBest& b) {
    return std::tie(a.started_us, a.run) > std::tie(b.started_us, b.run);
  });
  return runs;
}

}  // namespace crest::store::internal
