// The times' conversions (tuner::Timing ↔ TimeGemmsResponse), apart from
// convert.cc so that an edit of the times' types recompiles only this file of
// crest::wire.
#include <utility>
#include <vector>

#include "crest/tuner/timing.h"
#include "crest/wire/convert.h"
#include "run_table.h"

namespace crest::wire {
using internal::RunsAt;
using internal::RunTable;

void Fill(std::span<const tuner::Timing> timings, v1::TimeGemmsResponse* out) {
  RunTable runs(out->mutable_runs());
  for (const tuner::Timing& t : timings) {
    v1::GemmTiming* g = out->add_timings();
    g->set_time_us(t.time_us);
    g->set_low_us(t.low_us);
    g->set_high_us(t.high_us);
    g->set_source(ProtoSource(t.source));
    g->set_provenance(t.provenance);
    if (tuner::FromRuns(t.source)) {
      Fill(t.device, g->mutable_device());
      Fill(t.software, g->mutable_software());
    }
    runs.Refer(t.runs, g->mutable_runs());
    g->set_pooled(t.pooled);
  }
}

std::vector<tuner::Timing> TimingsOf(const v1::TimeGemmsResponse& in) {
  std::vector<tuner::Timing> out;
  for (const v1::GemmTiming& g : in.timings()) {
    tuner::Timing t;
    t.time_us = g.time_us();
    t.low_us = g.low_us();
    t.high_us = g.high_us();
    t.source = SourceOf(g.source());
    t.provenance = g.provenance();
    t.device = DeviceOf(g.device());
    t.software = SoftwareOf(g.software());
    t.runs = RunsAt(in.runs(), g.runs());
    t.pooled = g.pooled();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace crest::wire
