#include "study_races.h"

#include <set>

#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "crest/measure/set_racer.h"

namespace crest::sweep::internal {
namespace {

// Races this many candidates at most (a race's pairs and rounds grow with
// its candidates); a study whose pass ties more with its best is not raced,
// since a race of some of them could not order its answer.
constexpr int kMaxRaced = 32;

// Races this many studies of one sweep at most: each may take the race's
// max_seconds of device time, and a spec may name thousands of small
// studies; the rest say they were not raced.
constexpr size_t kMaxRaces = 64;

// The study's answer from the per-GEMM pass alone (no earlier race), from
// this device's software in the backend's mode, every candidate kept.
absl::StatusOr<tuner::DffRanking> PassRanking(const tuner::DffQuery& study, tuner::AlgoChoice algo,
                                              tuner::Backend& backend, store::Store& db) {
  answers::AnswerOptions options;
  options.algo = algo;
  const tuner::SoftwareInfo software = backend.Software();
  options.pin.cublaslt = software.cublaslt;
  options.pin.cuda_runtime = software.cuda_runtime;
  options.pin.driver = software.driver;
  options.mode = backend.Mode();
  options.races = false;
  tuner::DffQuery query = study;
  query.top = 0;
  return answers::StoreAnswers(db, db.path(), options)->Dff(query, backend.Gpu());
}

// The candidates to race: every measured row of the headline's run tied
// with the best, then those whose interval comes within the window of the
// leader's, in ranked order, up to the limits. Empty with `why` set when
// fewer than two qualify.
std::vector<const tuner::DffRow*> Leaders(const tuner::DffRanking& ranking,
                                          const std::string& device_uuid,
                                          const measure::RaceSettings& settings, std::string& why) {
  const tuner::DffRow* lead = nullptr;
  for (const tuner::DffRow& r : ranking.rows) {
    if (tuner::FromRuns(r.source)) {
      lead = &r;
      break;
    }
  }
  if (lead == nullptr || lead->runs.size() != 1) {
    why = "no candidate is measured whole by one run";
    return {};
  }
  const tuner::RunInfo& run = lead->runs.front();
  if (run.device_uuid != device_uuid) {
    why = StrCat("the study's measured answer comes from another device (", run.device_uuid, ")");
    return {};
  }
  std::vector<const tuner::DffRow*> out;
  for (const tuner::DffRow& r : ranking.rows) {
    if (tuner::MeasuredByRun(r, run) && r.tie_group == 1) out.push_back(&r);
  }
  if (static_cast<int>(out.size()) > kMaxRaced) {
    // A race of some of them could not order the answer (ApplyRace needs
    // every measured row tied with the best): not run at all.
    why = StrCat(out.size(), " measured candidates are tied with the best, more than the ",
                 kMaxRaced, " a race can order; not raced (narrow the window or the study)");
    return {};
  }
  const double reach = lead->time_high_us * (1 + settings.window);
  for (const tuner::DffRow& r : ranking.rows) {
    if (static_cast<int>(out.size()) >= settings.max_candidates) break;
    if (!tuner::MeasuredByRun(r, run) || r.tie_group == 1 || r.time_low_us > reach) continue;
    out.push_back(&r);
  }
  if (out.size() < 2) {
    why = StrCat("only the leader (d_ff ", lead->d_ff, ") lies within ", 100 * settings.window,
                 "% of its time");
    return {};
  }
  return out;
}

// Each candidate's GEMMs with the algorithm the run's pass chose for them
// (`algo`: its fastest, or cuBLASLt's first choice).
absl::StatusOr<std::vector<std::vector<measure::PinnedGemm>>> PinnedSets(
    const tuner::DffQuery& study, tuner::AlgoChoice algo,
    const std::vector<const tuner::DffRow*>& leaders, tuner::Backend& backend, store::Store& db,
    const store::RunKey& run) {
  std::vector<std::vector<tuner::GemmShape>> gemms;
  std::set<store::GemmKey> keys;
  for (const tuner::DffRow* r : leaders) {
    auto set = tuner::DffCandidateGemms(study, r->d_ff);
    if (!set.ok()) return set.status();
    for (const tuner::GemmShape& g : *set) keys.insert(store::GemmKey::Of(g));
    gemms.push_back(*std::move(set));
  }
  const std::vector<store::GemmKey> wanted(keys.begin(), keys.end());
  auto bests =
      db.RunBests(std::string(backend.Gpu().name), wanted, run.software_id, backend.Mode(), algo);
  if (!bests.ok()) return bests.status();
  std::vector<std::vector<measure::PinnedGemm>> sets;
  for (const std::vector<tuner::GemmShape>& set : gemms) {
    std::vector<measure::PinnedGemm>& pinned = sets.emplace_back();
    for (const tuner::GemmShape& g : set) {
      const auto found = bests->find(store::GemmKey::Of(g));
      const store::RunBest* best = nullptr;
      if (found != bests->end()) {
        for (const store::RunBest& b : found->second) {
          if (b.run == run) best = &b;
        }
      }
      if (best == nullptr) {
        return absl::NotFoundError(StrCat("the run's ", tuner::AlgoChoiceName(algo),
                                          " algorithm for ", g.name, " (m=", g.m, " n=", g.n,
                                          " k=", g.k, ") is not in the database"));
      }
      auto row = db.GetMeasurement(best->measurement_id);
      if (!row.ok()) return row.status();
      pinned.push_back({g, row->result.algo});
    }
  }
  return sets;
}

store::RaceRecord RecordOf(const StudyRaceReport& report, tuner::Backend& backend,
                           const store::RunKey& run, double resolution) {
  store::RaceRecord r;
  r.job_id = run.job_id;
  r.device_id = run.device_id;
  r.software_id = run.software_id;
  r.gpu_model = std::string(backend.Gpu().name);
  r.mode = backend.Mode();
  r.algo = report.algo;
  r.study = report.study;
  r.resolution = resolution;
  r.error_rate = measure::kRaceErrorRate;
  const measure::StudyRaceResult& res = report.result;
  r.rounds = res.rounds;
  r.retaken = res.retaken;
  r.warmup_s = res.warmup_s;
  r.settled = res.settled;
  r.seconds = res.seconds;
  r.stop_reason = res.stop_reason;
  for (tuner::RaceStanding s : res.standings) {
    s.value = report.d_ff[static_cast<size_t>(s.candidate)];
    r.entries.push_back(s);
  }
  r.times = res.times;
  return r;
}

// One study: choose, pin, race, store. Store errors are returned; the rest
// end in report.why_not.
absl::Status RaceStudy(const tuner::DffQuery& study, const measure::RaceSettings& settings,
                       tuner::Backend& backend, measure::SetRacer& racer, store::Store& db,
                       const RaceContext& context, StudyRaceReport& report) {
  auto ranking = PassRanking(study, report.algo, backend, db);
  if (!ranking.ok()) {
    report.why_not = StrCat("no answer to race: ", ranking.status().message());
    return absl::OkStatus();
  }
  const std::vector<const tuner::DffRow*> leaders =
      Leaders(*ranking, backend.Device().uuid, settings, report.why_not);
  if (leaders.empty()) return absl::OkStatus();
  const store::RunKey run{leaders.front()->runs.front().job_id, context.device_id,
                          context.software_id};
  report.raced_job = run.job_id;
  const tuner::DeviceInfo device = backend.Device();
  report.measured_on = device.replay.empty() ? StrCat("measured on ", device.name, " ", device.uuid,
                                                      ", cuBLASLt ", backend.Software().cublaslt)
                                             : StrCat("replayed (not measured) on a simulated ",
                                                      device.gpu_model, ": ", device.replay);
  for (const tuner::DffRow* r : leaders) report.d_ff.push_back(r->d_ff);
  auto sets = PinnedSets(study, report.algo, leaders, backend, db, run);
  if (!sets.ok()) {
    report.why_not = StrCat("not raced: ", sets.status().message());
    return absl::OkStatus();
  }
  if (context.on_stage) {
    context.on_stage(StrCat("racing ", report.study, RaceAlgoNote(report.algo), ": ",
                            leaders.size(), " candidates within ", 100 * settings.window,
                            "% of d_ff ", leaders.front()->d_ff, " (job ", run.job_id, ")"));
  }
  measure::StudyRaceOptions options;
  options.resolution = settings.resolution;
  options.max_seconds = settings.max_seconds;
  auto result = racer.RaceSets(*sets, options, context.stop);
  if (!result.ok()) {
    report.why_not = StrCat("the race failed: ", result.status().message());
    return absl::OkStatus();
  }
  report.result = *std::move(result);
  auto id = db.InsertRace(RecordOf(report, backend, run, settings.resolution));
  if (!id.ok()) return id.status();
  report.race_id = *id;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<StudyRaceReport>> RaceStudies(const SweepSpec& spec,
                                                         tuner::Backend& backend, store::Store& db,
                                                         const RaceContext& context) {
  std::vector<StudyRaceReport> reports;
  const measure::RaceSettings& settings = spec.measure.race;
  if (!settings.enabled || !backend.Measures() || spec.dff.empty()) return reports;
  auto* racer = dynamic_cast<measure::SetRacer*>(&backend);
  std::set<std::string> raced;  // a study given twice is raced once
  for (const tuner::DffQuery& study : spec.dff) {
    const std::string key = StrCat(tuner::DffStudyKey(study), " ratio=", study.dff.ratio.text,
                                   " window=", study.dff.window, " align=", study.dff.align);
    if (!raced.insert(key).second) continue;
    for (const tuner::AlgoChoice algo : settings.algos) {
      StudyRaceReport& report = reports.emplace_back();
      report.study = tuner::DffStudyKey(study);
      report.algo = algo;
      if (racer == nullptr) {
        report.why_not = StrCat("the ", backend.Name(), " backend cannot race");
        continue;
      }
      if (reports.size() > kMaxRaces) {
        report.why_not = StrCat("a sweep runs ", kMaxRaces, " races at most");
        continue;
      }
      if (context.stop && context.stop()) {
        report.why_not = "stopped before its race";
        continue;
      }
      if (auto s = RaceStudy(study, settings, backend, *racer, db, context, report); !s.ok()) {
        return s;
      }
    }
  }
  return reports;
}

}  // namespace crest::sweep::internal
