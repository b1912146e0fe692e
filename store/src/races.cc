// The races of a study's leading candidates: one row per race, one per
// candidate's standing, one per timing.
#include <string>
#include <string_view>

#include "crest/common/str_cat.h"
#include "race_columns.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

absl::Status InsertEntries(Connection& conn, int64_t race_id, const RaceRecord& race) {
  auto entry = conn.Prepare(StrCat("INSERT INTO race_entries(race_id, ", RaceEntryColumnList(),
                                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  if (!entry.ok()) return entry.status();
  for (const tuner::RaceStanding& e : race.entries) {
    Statement& s = (*entry)->Reset();
    s.Bind(1, race_id).Bind(2, e.candidate).Bind(3, e.value);
    s.Bind(4, std::string(tuner::RaceVerdictName(e.verdict)));
    s.Bind(5, e.tie_group).Bind(6, e.rounds).Bind(7, e.median_us).Bind(8, e.ratio);
    s.Bind(9, e.ratio_low).Bind(10, e.ratio_high);
    if (auto st = s.Run("writing a race's standing"); !st.ok()) return st;
  }
  auto time = conn.Prepare(
      "INSERT INTO race_times(race_id, round, candidate, time_us) VALUES (?1, ?2, ?3, ?4)");
  if (!time.ok()) return time.status();
  for (size_t r = 0; r < race.times.size(); ++r) {
    for (size_t c = 0; c < race.times[r].size(); ++c) {
      if (race.times[r][c] <= 0) continue;  // not timed that round
      Statement& s = (*time)->Reset();
      s.Bind(1, race_id).Bind(2, static_cast<int64_t>(r)).Bind(3, static_cast<int64_t>(c));
      s.Bind(4, race.times[r][c]);
      if (auto st = s.Run("writing a race's timing"); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadEntries(Connection& conn, RaceRecord& race, bool with_times) {
  auto entry = conn.Prepare(StrCat("SELECT ", RaceEntryColumnList(),
                                   " FROM race_entries WHERE race_id = ?1 "
                                   "ORDER BY tie_group, ratio, candidate"));
  if (!entry.ok()) return entry.status();
  (*entry)->Bind(1, race.id);
  std::string unknown;  // a verdict this build does not know
  auto s = (*entry)->ForEachRow("reading a race's standings", [&](const Statement& row) {
    tuner::RaceStanding e;
    e.candidate = static_cast<int>(row.Int("candidate"));
    e.value = row.Int("value");
    const std::string verdict = row.Text("verdict");
    if (auto v = tuner::ParseRaceVerdict(verdict)) {
      e.verdict = *v;
    } else if (unknown.empty()) {
      unknown = verdict;
    }
    e.tie_group = static_cast<int>(row.Int("tie_group"));
    e.rounds = static_cast<int>(row.Int("rounds"));
    e.median_us = row.Double("median_us");
    e.ratio = row.Double("ratio");
    e.ratio_low = row.Double("ratio_low");
    e.ratio_high = row.Double("ratio_high");
    race.entries.push_back(std::move(e));
  });
  if (s.ok() && !unknown.empty()) {
    return absl::DataLossError(StrCat("race ", race.id, " in ", conn.path(),
                                      ": race_entries.verdict '", unknown.substr(0, 32),
                                      "' is not leader, slower, tied or unresolved"));
  }
  if (!s.ok() || !with_times) return s;
  auto time = conn.Prepare(
      "SELECT round, candidate, time_us FROM race_times WHERE race_id = ?1 "
      "ORDER BY round, candidate");
  if (!time.ok()) return time.status();
  (*time)->Bind(1, race.id);
  const size_t candidates = race.entries.size();
  race.times.assign(static_cast<size_t>(race.rounds), std::vector<double>(candidates, 0.0));
  return (*time)->ForEachRow("reading a race's timings", [&](const Statement& row) {
    const auto r = static_cast<size_t>(row.Int("round"));
    const auto c = static_cast<size_t>(row.Int("candidate"));
    if (r < race.times.size() && c < candidates) race.times[r][c] = row.Double("time_us");
  });
}

}  // namespace

absl::StatusOr<int64_t> SqliteStore::InsertRace(const RaceRecord& race) {
  int64_t id = 0;
  auto status = InTransaction("writing a race", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(StrCat(
        "INSERT INTO races(uid, job_id, device_id, software_id, ", RaceColumnList(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18)"));
    if (!stmt.ok()) return stmt.status();
    Statement& s = **stmt;
    s.Bind(1, NewUid()).Bind(2, race.job_id).Bind(3, race.device_id).Bind(4, race.software_id);
    s.Bind(5, race.gpu_model).Bind(6, tuner::CacheModeName(race.mode.cache));
    s.Bind(7, tuner::ClockPolicyName(race.mode.clocks)).Bind(8, tuner::AlgoChoiceName(race.algo));
    s.Bind(9, race.study).Bind(10, race.resolution).Bind(11, race.rounds);
    s.Bind(12, race.retaken).Bind(13, race.warmup_s).Bind(14, static_cast<int>(race.settled));
    s.Bind(15, race.seconds).Bind(16, race.stop_reason).Bind(17, NowUs());
    s.Bind(18, race.error_rate);
    if (auto st = s.Run("writing a race"); !st.ok()) return st;
    id = conn_->LastInsertRowId();
    return InsertEntries(*conn_, id, race);
  });
  if (!status.ok()) return status;
  return id;
}

absl::StatusOr<std::optional<RaceRecord>> SqliteStore::FindRace(
    int64_t job_id, const std::string& device_uuid, const std::string& study,
    const tuner::MeasureMode& mode, tuner::AlgoChoice algo, bool with_times) {
  // By the job's index: a lookup per answer however many races the file
  // holds. The newest of the run's races is chosen here, not by ORDER BY …
  // LIMIT 1, for which SQLite built a temporary b-tree at every lookup
  // (a twentieth of crestd's CPU for a d_ff answer), though a run has few.
  // The text is built once for each of its two forms (every answer looks).
  const auto lookup = [](std::string_view job) {
    return StrCat(
        "SELECT r.id, r.created_us FROM races AS r JOIN devices AS d ON d.id = r.device_id "
        "WHERE ",
        job,
        " AND d.uuid = ?2 AND r.study = ?3 AND r.cache_mode = ?4 AND r.clock_policy = ?5 AND "
        "r.algo_choice = ?6");
  };
  static const std::string kOfJob = lookup("r.job_id = ?1");
  static const std::string kOutsideJobs = lookup("r.job_id IS NULL AND ?1 = 0");
  auto stmt = conn_->Prepare(job_id == 0 ? kOutsideJobs : kOfJob);
  if (!stmt.ok()) return stmt.status();
  Statement& newest = **stmt;
  newest.Bind(1, job_id).Bind(2, device_uuid).Bind(3, study);
  newest.Bind(4, tuner::CacheModeName(mode.cache)).Bind(5, tuner::ClockPolicyName(mode.clocks));
  newest.Bind(6, tuner::AlgoChoiceName(algo));
  std::optional<std::pair<int64_t, int64_t>> latest;  // (created_us, id)
  auto listed = newest.ForEachRow("looking up a race", [&](const Statement& row) {
    const std::pair<int64_t, int64_t> race{row.IntAt(1), row.IntAt(0)};
    if (!latest || race > *latest) latest = race;
  });
  if (!listed.ok()) return listed;
  if (!latest) return std::optional<RaceRecord>();
  static const std::string kById = StrCat("SELECT id, job_id, device_id, software_id, ",
                                          RaceColumnList(), " FROM races WHERE id = ?1");
  auto by_id = conn_->Prepare(kById);
  if (!by_id.ok()) return by_id.status();
  Statement& s = **by_id;
  s.Bind(1, latest->second);
  auto found = s.Step("reading a race");
  if (!found.ok()) return found.status();
  if (!*found) {  // deleted between the two reads (outside a read snapshot)
    s.Reset();
    return std::optional<RaceRecord>();
  }
  RaceRecord race;
  race.id = s.Int("id");
  if (!s.IsNull("job_id")) race.job_id = s.Int("job_id");
  race.device_id = s.Int("device_id");
  race.software_id = s.Int("software_id");
  race.gpu_model = s.Text("gpu_model");
  race.mode = mode;
  race.algo = algo;
  race.study = study;
  race.resolution = s.Double("resolution");
  race.error_rate = s.Double("error_rate");
  race.rounds = static_cast<int>(s.Int("rounds"));
  race.retaken = static_cast<int>(s.Int("retaken"));
  race.warmup_s = s.Double("warmup_s");
  race.settled = s.Int("settled") != 0;
  race.seconds = s.Double("seconds");
  race.stop_reason = s.Text("stop_reason");
  race.created_us = s.Int("created_us");
  s.Reset();
  if (auto st = ReadEntries(*conn_, race, with_times); !st.ok()) return st;
  return std::optional<RaceRecord>(std::move(race));
}

}  // namespace crest::store::internal
