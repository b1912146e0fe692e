#include "job_columns.h"

#include <array>

namespace crest::store::internal {
namespace {

using R = const Statement&;
using J = JobRecord&;

constexpr std::array kJobColumns{
    JobColumn{"id", [](R s, J j) { j.id = s.Int("id"); }},
    JobColumn{"uid", [](R s, J j) { j.uid = s.Text("uid"); }},
    JobColumn{"host", [](R s, J j) { j.host = s.Text("host"); }},
    JobColumn{"spec", [](R s, J j) { j.spec = s.Text("spec"); }},
    JobColumn{"backend", [](R s, J j) { j.backend = s.Text("backend"); }},
    JobColumn{"target", [](R s, J j) { j.target = s.Text("target"); }},
    JobColumn{
        "state",
        [](R s, J j) { j.state = ParseJobState(s.Text("state")).value_or(JobState::kFailed); }},
    JobColumn{"total", [](R s, J j) { j.total = s.Int("total"); }},
    JobColumn{"done", [](R s, J j) { j.done = s.Int("done"); }},
    JobColumn{"created_us", [](R s, J j) { j.created_us = s.Int("created_us"); }},
    JobColumn{"started_us",
              [](R s, J j) {
                if (!s.IsNull("started_us")) j.started_us = s.Int("started_us");
              }},
    JobColumn{"finished_us",
              [](R s, J j) {
                if (!s.IsNull("finished_us")) j.finished_us = s.Int("finished_us");
              }},
    JobColumn{"error", [](R s, J j) { j.error = s.Text("error"); }},
    JobColumn{"priority", [](R s, J j) { j.priority = static_cast<int>(s.Int("priority")); }},
    JobColumn{"submitted_by", [](R s, J j) { j.submitted_by = s.Text("submitted_by"); }},
};

}  // namespace

std::span<const JobColumn> JobColumns() { return kJobColumns; }

std::string JobColumnList(bool with_id, bool spec_text) {
  std::string out;
  for (const JobColumn& c : kJobColumns) {
    if (!with_id && c.name == "id") continue;
    if (!out.empty()) out += ", ";
    out += !spec_text && c.name == "spec" ? std::string("'' AS spec") : std::string(c.name);
  }
  return out;
}

JobRecord ReadJob(const Statement& s) {
  JobRecord job;
  for (const JobColumn& c : kJobColumns) c.read(s, job);
  return job;
}

}  // namespace crest::store::internal
