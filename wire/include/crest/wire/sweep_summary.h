// crest::wire — a sweep's report on the wire: crestd sends it on a job's
// final event (v1::SweepSummary beside the event's counts), and the CLI
// rebuilds the same sweep::SweepReport a local sweep prints.
#pragma once

#include "absl/status/statusor.h"
#include "crest/sweep/sweep_report.h"
#include "crest/v1/crest.pb.h"

namespace crest::wire {

// The report's parts the event's own fields (job, counts, kernel time) do
// not carry.
void Fill(const sweep::SweepReport& report, v1::SweepSummary* out);

// The report of a final event that carries a summary. InvalidArgument
// naming the field for one without a summary, or with a job state, race
// verdict, algorithm choice, measure mode or "measure" section this crest
// cannot read.
absl::StatusOr<sweep::SweepReport> SweepReportOf(const v1::JobEvent& event);

}  // namespace crest::wire
