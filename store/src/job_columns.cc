#include "job_columns.h"

#include <array>

namespace crest::store::internal {
namespace {

using S = const Statement&;
using J = JobRecord&;

constexpr std::array kColumns{
    JobColumn{"id", [](S s, J j) { j.id = s.Int("id"); }},
    JobColumn{"uid", [](S s, J j) { j.uid = s.Text("uid"); }},
    JobColumn{"host", [](S s, J j) { j.host = s.Text("host"); }},
    JobColumn{"spec", [](S s, J j) { j.spec = s.Text("spec"); }},
    JobColumn{"backend", [](S s, J j) { j.backend = s.Text("backend"); }},
    JobColumn{"target", [](S s, J j) { j.target = s.Text("target"); }},
    JobColumn{
        "state",
        [](S s, J j) { j.state = ParseJobState(s.Text("state")).value_or(JobState::kFailed); }},
    JobColumn{"total", [](S s, J j) { j.total = s.Int("total"); }},
    JobColumn{"done", [](S s, J j) { j.done = s.Int("done"); }},
    JobColumn{"created_us", [](S s, J j) { j.created_us = s.Int("created_us"); }},
    JobColumn{"started_us",
              [](S s, J j) {
                if (!s.IsNull("started_us")) j.started_us = s.Int("started_us");
              }},
    JobColumn{"finished_us",
              [](S s, J j) {
                if (!s.IsNull("finished_us")) j.finished_us = s.Int("finished_us");
              }},
    JobColumn{"error", [](S s, J j) { j.error = s.Text("error"); }},
    JobColumn{"priority", [](S s, J j) { j.priority = static_cast<int>(s.Int("priority")); }},
    JobColumn{"submitted_by", [](S s, J j) { j.submitted_by = s.Text("submitted_by"); }},
};

}  // namespace

std::span<const JobColumn> JobColumns() { return kColumns; }

std::string JobColumnList(bool with_id, bool spec_text) {
  std::string out;
  for (const JobColumn& c : kColumns) {
    if (!with_id && c.name == "id") continue;
    if (!out.empty()) out += ", ";
    out += !spec_text && c.name == "spec" ? std::string("'' AS spec") : std::string(c.name);
  }
  return out;
}

JobRecord ReadJob(const Statement& s) {
  JobRecord job;
  for (const JobColumn& c : kColumns) c.read(s, job);
  return job;
}

}  // namespace crest::store::internal
