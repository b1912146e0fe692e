// Internal to crest::store: a job's columns, declared once (as
// measurement_columns.h declares a measurement's). Each column of the jobs
// table is one entry: its name and how a row's value is read into a
// JobRecord. The selects, the listing (without the spec's text) and the
// merge are made from it; adding a column is an entry here, a migration
// (schema.cc) and the JobRecord's field.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "crest/store/records.h"
#include "sqlite.h"

namespace crest::store::internal {

struct JobColumn {
  std::string_view name;
  void (*read)(const Statement& s, JobRecord& job);
};

// Every column, in the table's order of declaration (id first).
std::span<const JobColumn> JobColumns();

// "id, uid, host, spec, …": every column (without_id: all but id, what a
// merge copies); with spec_text false the spec reads '' (listings: a spec
// may be large).
std::string JobColumnList(bool with_id = true, bool spec_text = true);

// Reads every column of the current row (selected by JobColumnList).
JobRecord ReadJob(const Statement& s);

}  // namespace crest::store::internal
