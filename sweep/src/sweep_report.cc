#include "crest/sweep/sweep_report.h"

#include <utility>

namespace crest::sweep {

SweepReport ReportOf(SweepOutcome outcome, const SweepSpec& spec, const tuner::Backend& backend) {
  SweepReport r;
  r.outcome = std::move(outcome);
  r.backend = std::string(backend.Name());
  r.measures = backend.Measures();
  r.mode = spec.measure.mode;
  r.measure = MeasureJson(spec.measure);
  r.notes = spec.notes;
  if (r.measures) {
    r.device = backend.Device();
    r.software = backend.Software();
  }
  return r;
}

}  // namespace crest::sweep
