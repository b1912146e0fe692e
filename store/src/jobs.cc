// Jobs: a sweep's plan size, state and progress.
#include "crest/common/str_cat.h"
#include "job_columns.h"
#include "run_packs.h"
#include "sqlite_store.h"

namespace crest::store::internal {

absl::StatusOr<JobRecord> SqliteStore::FindJob(const std::string& spec, const std::string& backend,
                                               const std::string& target) {
  // The newest job of the spec in one state: one probe of jobs_by_spec_state
  // (rows of an equal key lie in id order), however many runs it has had.
  auto stmt = conn_->Prepare(
      StrCat("SELECT ", JobColumnList(),
             " FROM jobs WHERE backend = ?1 AND target = ?2 AND spec = ?3 AND state = ?4 "
             "AND host = ?5 ORDER BY id DESC LIMIT 1"));
  if (!stmt.ok()) return stmt.status();
  // Unfinished jobs first (resumable), then finished ones; the newest of each.
  for (const auto& states :
       {std::vector<JobState>{JobState::kQueued, JobState::kRunning, JobState::kFailed},
        std::vector<JobState>{JobState::kDone, JobState::kCancelled}}) {
    std::optional<JobRecord> newest;
    for (JobState state : states) {
      (*stmt)->Bind(1, backend).Bind(2, target).Bind(3, spec).Bind(4, JobStateName(state));
      (*stmt)->Bind(5, options_.host);
      auto row = (*stmt)->Step("finding a job");
      if (!row.ok()) return row.status();
      if (*row) {
        JobRecord job = ReadJob(**stmt);
        if (!newest || job.id > newest->id) newest = std::move(job);
      }
      (*stmt)->Reset();
    }
    if (newest) return *std::move(newest);
  }
  return absl::NotFoundError("no such job");
}

absl::StatusOr<JobRecord> SqliteStore::CreateJob(const JobRecord& in) {
  JobRecord job = in;
  job.uid = NewUid();
  job.host = options_.host;
  job.created_us = NowUs();
  job.done = 0;
  absl::Status status = InTransaction("creating a job", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(
        "INSERT INTO jobs(uid, host, spec, backend, target, state, total, priority, created_us, "
        "submitted_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!stmt.ok()) return stmt.status();
    (*stmt)
        ->Bind(1, job.uid)
        .Bind(2, job.host)
        .Bind(3, job.spec)
        .Bind(4, job.backend)
        .Bind(5, job.target)
        .Bind(6, JobStateName(job.state))
        .Bind(7, job.total)
        .Bind(8, job.priority)
        .Bind(9, job.created_us)
        .Bind(10, job.submitted_by);
    if (auto s = (*stmt)->Run("creating a job"); !s.ok()) return s;
    job.id = conn_->LastInsertRowId();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return job;
}

absl::StatusOr<JobRecord> SqliteStore::GetJob(int64_t id) {
  auto stmt = conn_->Prepare(StrCat("SELECT ", JobColumnList(), " FROM jobs WHERE id = ?1"));
  if (!stmt.ok()) return stmt.status();
  auto row = (*stmt)->Bind(1, id).Step("reading a job");
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(StrCat("job ", id, " not found in ", path()));
  JobRecord job = ReadJob(**stmt);
  (*stmt)->Reset();
  return job;
}

absl::StatusOr<std::vector<JobRecord>> SqliteStore::ListJobs(const JobListing& listing) {
  auto stmt =
      conn_->Prepare(StrCat("SELECT ", JobColumnList(true, listing.with_spec),
                            " FROM jobs WHERE (?1 IS NULL OR state = ?1) AND (?3 <= 0 OR id < ?3) "
                            "ORDER BY id DESC LIMIT ?2"));
  if (!stmt.ok()) return stmt.status();
  if (listing.state) {
    (*stmt)->Bind(1, JobStateName(*listing.state));
  } else {
    (*stmt)->BindNull(1);
  }
  (*stmt)->Bind(2, listing.limit > 0 ? listing.limit : -1).Bind(3, listing.before_id);
  std::vector<JobRecord> out;
  auto listed = (*stmt)->ForEachRow("listing jobs",
                                    [&](const Statement& row) { out.push_back(ReadJob(row)); });
  if (!listed.ok()) return listed;
  return out;
}

absl::Status SqliteStore::UpdateJob(int64_t id, JobState state, int64_t total, int64_t done,
                                    const std::string& error) {
  return InTransaction("updating a job", [&]() -> absl::Status {
    auto stmt = conn_->Prepare(
        "UPDATE jobs SET state = ?1, total = ?2, error = ?3, done = ?6, "
        "started_us = CASE WHEN ?1 = 'running' THEN ?4 ELSE started_us END, "
        "finished_us = CASE WHEN ?1 IN ('done','failed','cancelled') THEN ?4 ELSE NULL END "
        "WHERE id = ?5");
    if (!stmt.ok()) return stmt.status();
    (*stmt)
        ->Bind(1, JobStateName(state))
        .Bind(2, total)
        .Bind(3, error)
        .Bind(4, NowUs())
        .Bind(5, id);
    (*stmt)->Bind(6, done);
    if (auto s = (*stmt)->Run("updating a job"); !s.ok()) return s;
    if (conn_->Changes() == 0) return absl::NotFoundError(StrCat("job ", id, " not found"));
    // A finished job's runs are read whole from now on: packed by line.
    if (state == JobState::kDone) return PackJobRuns(*conn_, id);
    return absl::OkStatus();
  });
}

}  // namespace crest::store::internal
