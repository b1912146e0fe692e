#include "crest/wire/sweep_summary.h"

#include <utility>

#include "crest/common/str_cat.h"
#include "crest/wire/values.h"

namespace crest::wire {
namespace {

void Fill(const tuner::HostStages& h, v1::HostStages* out) {
  out->set_operands_s(h.operands_s);
  out->set_plan_s(h.plan_s);
  out->set_graphs_s(h.graphs_s);
  out->set_verify_s(h.verify_s);
  out->set_readings_s(h.readings_s);
}

tuner::HostStages HostStagesOf(const v1::HostStages& in) {
  tuner::HostStages h;
  h.operands_s = in.operands_s();
  h.plan_s = in.plan_s();
  h.graphs_s = in.graphs_s();
  h.verify_s = in.verify_s();
  h.readings_s = in.readings_s();
  return h;
}

void Fill(const tuner::RaceStanding& s, v1::StudyRaceStanding* out) {
  out->set_candidate(s.candidate);
  out->set_verdict(std::string(tuner::RaceVerdictName(s.verdict)));
  out->set_tie_group(s.tie_group);
  out->set_rounds(s.rounds);
  out->set_median_us(s.median_us);
  out->set_ratio(s.ratio);
  out->set_ratio_low(s.ratio_low);
  out->set_ratio_high(s.ratio_high);
}

void Fill(const sweep::StudyRaceReport& race, v1::StudyRace* out) {
  out->set_study(race.study);
  out->set_algo(std::string(tuner::AlgoChoiceName(race.algo)));
  out->set_race_id(race.race_id);
  out->set_why_not(race.why_not);
  out->set_raced_job(race.raced_job);
  out->set_measured_on(race.measured_on);
  for (int64_t d_ff : race.d_ff) out->add_d_ff(d_ff);
  const measure::StudyRaceResult& r = race.result;
  out->set_rounds(r.rounds);
  out->set_retaken(r.retaken);
  out->set_warmup_s(r.warmup_s);
  out->set_settled(r.settled);
  out->set_seconds(r.seconds);
  out->set_stop_reason(r.stop_reason);
  for (const tuner::RaceStanding& s : r.standings) Fill(s, out->add_standings());
}

absl::StatusOr<tuner::RaceStanding> StandingOf(const v1::StudyRaceStanding& in, size_t candidates) {
  const auto verdict = tuner::ParseRaceVerdict(in.verdict());
  if (!verdict) {
    return absl::InvalidArgumentError(
        StrCat("summary.races.standings.verdict: unknown verdict \"", in.verdict(), "\""));
  }
  if (in.candidate() < 0 || static_cast<size_t>(in.candidate()) >= candidates) {
    return absl::InvalidArgumentError(StrCat("summary.races.standings.candidate: ", in.candidate(),
                                             " is not one of the race's ", candidates,
                                             " candidates"));
  }
  tuner::RaceStanding s;
  s.candidate = in.candidate();
  s.verdict = *verdict;
  s.tie_group = in.tie_group();
  s.rounds = in.rounds();
  s.median_us = in.median_us();
  s.ratio = in.ratio();
  s.ratio_low = in.ratio_low();
  s.ratio_high = in.ratio_high();
  return s;
}

absl::StatusOr<sweep::StudyRaceReport> RaceOf(const v1::StudyRace& in) {
  const auto algo = tuner::ParseAlgoChoice(in.algo());
  if (!algo) {
    return absl::InvalidArgumentError(
        StrCat("summary.races.algo: unknown algorithm choice \"", in.algo(), "\""));
  }
  sweep::StudyRaceReport race;
  race.study = in.study();
  race.algo = *algo;
  race.race_id = in.race_id();
  race.why_not = in.why_not();
  race.raced_job = in.raced_job();
  race.measured_on = in.measured_on();
  race.d_ff.assign(in.d_ff().begin(), in.d_ff().end());
  measure::StudyRaceResult& r = race.result;
  r.rounds = in.rounds();
  r.retaken = in.retaken();
  r.warmup_s = in.warmup_s();
  r.settled = in.settled();
  r.seconds = in.seconds();
  r.stop_reason = in.stop_reason();
  for (const v1::StudyRaceStanding& s : in.standings()) {
    auto standing = StandingOf(s, race.d_ff.size());
    if (!standing.ok()) return standing.status();
    standing->value = race.d_ff[static_cast<size_t>(standing->candidate)];
    r.standings.push_back(*standing);
  }
  return race;
}

// The outcome's counts and times: the event's own fields, and the
// summary's for what the event does not carry.
absl::StatusOr<sweep::SweepOutcome> OutcomeOf(const v1::JobEvent& e) {
  const v1::SweepSummary& s = e.summary();
  sweep::SweepOutcome o;
  bool state_known = false;
  o.job = JobRecordOf(e.job(), &state_known);
  if (!state_known) {
    return absl::InvalidArgumentError(StrCat("job.state: unknown job state ", e.job().state()));
  }
  sweep::SweepProgress& p = o.progress;
  p.done = o.job.done;
  p.total = o.job.total;
  p.new_results = e.new_results();
  p.failed = e.failed();
  p.elapsed_s = e.elapsed_s();
  p.kernel_s = e.kernel_s();
  p.busy_s = s.busy_s();
  p.host = HostStagesOf(s.host());
  p.write_s = s.write_s();
  p.reload_s = s.reload_s();
  p.keep_load_s = s.keep_load_s();
  o.already_present = s.already_present();
  o.resumed = s.resumed();
  o.first_error = s.first_error();
  for (const v1::StudyRace& r : s.races()) {
    auto race = RaceOf(r);
    if (!race.ok()) return race.status();
    o.races.push_back(*std::move(race));
  }
  o.plan_notes.assign(s.plan_notes().begin(), s.plan_notes().end());
  if (s.has_revalidation()) {
    const v1::Revalidation& r = s.revalidation();
    o.revalidation = sweep::SweepOutcome::Revalidation{
        r.retimed(), r.searched(), {r.lines().begin(), r.lines().end()}};
  }
  return o;
}

}  // namespace

void Fill(const sweep::SweepReport& report, v1::SweepSummary* out) {
  const sweep::SweepOutcome& o = report.outcome;
  out->set_backend(report.backend);
  out->set_measures(report.measures);
  out->set_already_present(o.already_present);
  out->set_resumed(o.resumed);
  out->set_busy_s(o.progress.busy_s);
  Fill(o.progress.host, out->mutable_host());
  out->set_write_s(o.progress.write_s);
  out->set_reload_s(o.progress.reload_s);
  out->set_keep_load_s(o.progress.keep_load_s);
  wire::Fill(report.mode, out->mutable_mode());
  out->set_measure_json(report.measure.is_null() ? "" : report.measure.dump());
  for (const std::string& note : report.notes) out->add_notes(note);
  if (report.device) wire::Fill(*report.device, out->mutable_device());
  if (report.software) wire::Fill(*report.software, out->mutable_software());
  for (const sweep::StudyRaceReport& race : o.races) Fill(race, out->add_races());
  for (const std::string& note : o.plan_notes) out->add_plan_notes(note);
  if (o.revalidation) {
    v1::Revalidation* r = out->mutable_revalidation();
    r->set_retimed(o.revalidation->retimed);
    r->set_searched(o.revalidation->searched);
    for (const std::string& line : o.revalidation->lines) r->add_lines(line);
  }
  out->set_first_error(o.first_error);
}

absl::StatusOr<sweep::SweepReport> SweepReportOf(const v1::JobEvent& e) {
  if (!e.has_summary()) {
    return absl::InvalidArgumentError("summary: the event carries no sweep summary");
  }
  const v1::SweepSummary& s = e.summary();
  auto outcome = OutcomeOf(e);
  if (!outcome.ok()) return outcome.status();
  auto mode = ModeOf(s.mode());
  if (!mode.ok()) return mode.status();
  sweep::SweepReport r;
  r.outcome = *std::move(outcome);
  r.backend = s.backend();
  r.measures = s.measures();
  r.mode = *mode;
  if (!s.measure_json().empty()) {
    r.measure = nlohmann::json::parse(s.measure_json(), nullptr, /*allow_exceptions=*/false);
    if (r.measure.is_discarded()) {
      return absl::InvalidArgumentError("summary.measure_json: not a JSON document");
    }
  }
  r.notes.assign(s.notes().begin(), s.notes().end());
  if (s.has_device()) r.device = DeviceOf(s.device());
  if (s.has_software()) r.software = SoftwareOf(s.software());
  return r;
}

}  // namespace crest::wire
