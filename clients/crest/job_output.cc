// Jobs and sweeps (`crest jobs …`, `crest sweep`) as text, JSON and CSV.
#include <ctime>

#include "crest/common/str_cat.h"
#include "crest/wire/values.h"
#include "job_reports.h"
#include "json_views.h"
#include "outputs.h"

namespace crest::cli {
namespace {

std::string Time(int64_t us) {
  if (us == 0) return "-";
  const auto t = static_cast<std::time_t>(us / 1'000'000);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &utc);
  return buf;
}

Table JobsTable(const std::vector<v1::Job>& jobs) {
  Table table({{"id"},
               {"state", Table::Align::kLeft},
               {"done"},
               {"total"},
               {"priority"},
               {"backend", Table::Align::kLeft},
               {"target", Table::Align::kLeft},
               {"created (UTC)", Table::Align::kLeft},
               {"host", Table::Align::kLeft}});
  for (const auto& j : jobs) {
    table.AddRow({std::to_string(j.id()), wire::JobStateText(j.state()), std::to_string(j.done()),
                  std::to_string(j.total()), std::to_string(j.priority()), j.backend(), j.target(),
                  Time(j.created_us()), j.host()});
  }
  return table;
}

}  // namespace

std::string JobLine(const v1::Job& j) {
  std::string line =
      StrCat("job ", j.id(), ": ", wire::JobStateText(j.state()), ", ", j.done(), "/", j.total(),
             " GEMMs, ", j.backend(), " ", j.target(), ", priority ", j.priority());
  if (!j.error().empty()) line += StrCat("\n  error: ", j.error());
  return line;
}

std::string Accounting(double gemms_per_minute, double gpu_busy_fraction,
                       double host_overhead_per_gemm_s) {
  return Fixed(gemms_per_minute, 1) + " GEMMs/min, GPU busy " + Fixed(100 * gpu_busy_fraction, 1) +
         "%, host " + Fixed(1e3 * host_overhead_per_gemm_s, 1) + " ms/GEMM";
}

void Text(const JobReport& r, std::ostream& out) {
  const v1::Job& job = r.job;
  out << JobLine(job) << (r.note.empty() ? "" : " " + r.note) << '\n';
  if (!r.detailed) return;
  out << "  uid " << job.uid() << ", host " << job.host() << ", submitted by "
      << (job.submitted_by().empty() ? "(not recorded)" : job.submitted_by()) << "\n  created "
      << Time(job.created_us()) << ", started " << Time(job.started_us()) << ", finished "
      << Time(job.finished_us()) << " (UTC)\n  spec " << job.spec_json() << '\n';
}
nlohmann::json Json(const JobReport& r) { return JobJson(r.job); }
Table Csv(const JobReport& r) { return JobsTable({r.job}); }

void Text(const JobListReport& r, std::ostream& out) {
  JobsTable(r.jobs).Print(out);
  if (r.jobs.empty()) out << "(no jobs)\n";
  if (r.next_before_id > 0) {
    out << "(more: crest jobs list --before " << r.next_before_id << ")\n";
  }
}
nlohmann::json Json(const JobListReport& r) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const v1::Job& j : r.jobs) jobs.push_back(JobJson(j));
  return {{"jobs", jobs},
          {"next_before_id", r.next_before_id > 0 ? nlohmann::json(r.next_before_id) : nullptr}};
}
Table Csv(const JobListReport& r) { return JobsTable(r.jobs); }

void Text(const JobEventReport& r, std::ostream& out) {
  const v1::JobEvent& e = r.event;
  out << JobLine(e.job());
  if (r.server.empty()) {
    out << '\n';
    return;
  }
  out << " on crestd at " << r.server << "\n  " << e.new_results()
      << (e.job().backend() == "model" ? " new predictions (model, not measured), "
                                       : " new measurements, ")
      << e.failed() << " failed, " << Fixed(e.elapsed_s(), 2) << " s\n";
  if (e.kernel_s() > 0) {
    out << "  "
        << Accounting(e.gemms_per_minute(), e.gpu_busy_fraction(), e.host_overhead_per_gemm_s())
        << "\n";
  }
}
nlohmann::json Json(const JobEventReport& r) { return JobEventJson(r.event); }
Table Csv(const JobEventReport& r) { return JobsTable({r.event.job()}); }

namespace {
// "  host ms/GEMM: operands 1.2, plan 3.4, …": where the time outside the
// timed kernels went (docs/measurement.md, "Accounting").
std::string HostBreakdown(const sweep::SweepProgress& p) {
  const auto h = p.HostPerGemm();
  const auto ms = [](double s) { return Fixed(1e3 * s, 1); };
  return StrCat("  host ms/GEMM: operands ", ms(h.host.operands_s), ", plan ", ms(h.host.plan_s),
                ", graphs ", ms(h.host.graphs_s), ", verification ", ms(h.host.verify_s),
                ", GPU readings ", ms(h.host.readings_s), ", other engine ", ms(h.other_engine_s),
                ", database write ", ms(h.write_s), ", between GEMMs ", ms(h.between_s), "\n",
                "  device ms/GEMM keeping the load while the host works: ", ms(h.keep_load_s),
                ", reloading after idle gaps: ", ms(h.reload_s), " (untimed, counted busy)\n");
}

nlohmann::json HostBreakdownJson(const sweep::SweepProgress& p) {
  const auto h = p.HostPerGemm();
  return {{"operands_s", h.host.operands_s},
          {"plan_s", h.host.plan_s},
          {"graphs_s", h.host.graphs_s},
          {"verify_s", h.host.verify_s},
          {"readings_s", h.host.readings_s},
          {"other_engine_s", h.other_engine_s},
          {"write_s", h.write_s},
          {"between_s", h.between_s},
          {"reload_s", h.reload_s},
          {"keep_load_s", h.keep_load_s}};
}

nlohmann::json RacesJson(const std::vector<sweep::StudyRaceReport>& races) {
  nlohmann::json out = nlohmann::json::array();
  for (const sweep::StudyRaceReport& race : races) {
    nlohmann::json standings = nlohmann::json::array();
    for (const tuner::RaceStanding& s : race.result.standings) {
      standings.push_back({{"d_ff", race.d_ff[static_cast<size_t>(s.candidate)]},
                           {"verdict", tuner::RaceVerdictName(s.verdict)},
                           {"tie_group", s.tie_group},
                           {"rounds", s.rounds},
                           {"median_us", s.median_us},
                           {"ratio", s.ratio},
                           {"ratio_low", s.ratio_low},
                           {"ratio_high", s.ratio_high}});
    }
    const bool raced = race.race_id > 0;
    const measure::StudyRaceResult& r = race.result;
    out.push_back({{"study", race.study},
                   {"algo", tuner::AlgoChoiceName(race.algo)},
                   {"race_id", raced ? nlohmann::json(race.race_id) : nlohmann::json(nullptr)},
                   {"why_not", raced ? nlohmann::json(nullptr) : nlohmann::json(race.why_not)},
                   {"job", race.raced_job},
                   {"measured_on", race.measured_on},
                   {"rounds", r.rounds},
                   {"seconds", r.seconds},
                   {"warmup_s", r.warmup_s},
                   {"settled", r.settled},
                   {"retaken", r.retaken},
                   {"stop_reason", r.stop_reason},
                   {"standings", standings}});
  }
  return out;
}

// "crest.db", or "crestd at node7:7878" for a sweep a crestd ran.
std::string Where(const SweepReport& r) {
  return r.server.empty() ? r.db : StrCat("crestd at ", r.server);
}

double Rate(const sweep::SweepOutcome& o) {
  return o.progress.elapsed_s > 0
             ? static_cast<double>(o.progress.new_results) / o.progress.elapsed_s
             : 0;
}
}  // namespace

void Text(const SweepReport& report, std::ostream& out) {
  const sweep::SweepReport& r = report.sweep;
  const sweep::SweepOutcome& o = r.outcome;
  const bool replayed = r.device && !r.device->replay.empty();
  out << "job " << o.job.id << (o.resumed ? " (resumed)" : "") << ": "
      << store::JobStateName(o.job.state) << ", " << o.job.done << "/" << o.job.total
      << " GEMMs in " << Where(report) << "\n  " << o.progress.new_results << " new "
      << (replayed     ? "replayed results"
          : r.measures ? "measurements"
                       : "predictions")
      << ", " << o.already_present << " already in the database, " << o.progress.failed
      << " failed\n  " << Fixed(o.progress.elapsed_s, 2) << " s, " << Fixed(Rate(o), 0)
      << " GEMMs/s\n";
  if (replayed) {
    // Simulated device time against wall time says nothing: no accounting.
    out << "  replayed (not measured): " << r.device->replay << ", on a simulated "
        << r.device->gpu_model << ", " << tuner::CacheModeName(r.mode.cache) << " L2, "
        << tuner::ClockPolicyName(r.mode.clocks) << " clocks\n";
  } else if (r.measures && o.progress.elapsed_s > 0) {
    out << "  measured";
    if (r.device && r.software) {
      out << " on " << r.device->name << " " << r.device->uuid << " (driver " << r.software->driver
          << ", CUDA runtime " << r.software->cuda_runtime << ", cuBLASLt " << r.software->cublaslt
          << "),";
    }
    out << " " << tuner::CacheModeName(r.mode.cache) << " L2, "
        << tuner::ClockPolicyName(r.mode.clocks) << " clocks; "
        << Accounting(o.progress.GemmsPerMinute(), o.progress.GpuBusyFraction(),
                      o.progress.HostOverheadPerGemmS())
        << "\n"
        << HostBreakdown(o.progress);
  }
  for (const std::string& note : o.plan_notes) out << "  " << note << '\n';
  if (o.revalidation) {
    for (const std::string& line : o.revalidation->lines) out << "  " << line << '\n';
  }
  for (const sweep::StudyRaceReport& race : o.races) {
    out << "  " << sweep::DescribeRace(race) << '\n';
  }
  if (!o.job.error.empty()) out << "  error: " << o.job.error << '\n';
}

nlohmann::json Json(const SweepReport& report) {
  const sweep::SweepReport& r = report.sweep;
  const sweep::SweepOutcome& o = r.outcome;
  return {
      {"db", report.db.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.db)},
      {"server", report.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.server)},
      {"backend", r.backend},
      {"job", JobJson(o.job)},
      {"resumed", o.resumed},
      {"new_results", o.progress.new_results},
      {"already_present", o.already_present},
      {"failed", o.progress.failed},
      {"elapsed_s", o.progress.elapsed_s},
      {"gemms_per_s", Rate(o)},
      {"kernel_s", o.progress.kernel_s},
      {"gemms_per_minute", o.progress.GemmsPerMinute()},
      {"gpu_busy_fraction", o.progress.GpuBusyFraction()},
      {"host_overhead_per_gemm_s", o.progress.HostOverheadPerGemmS()},
      {"host_per_gemm", HostBreakdownJson(o.progress)},
      {"measure", r.measures ? r.measure : nlohmann::json(nullptr)},
      {"device", r.device ? DeviceJson(*r.device) : nlohmann::json(nullptr)},
      {"software", r.software ? SoftwareJson(*r.software) : nlohmann::json(nullptr)},
      {"races", RacesJson(o.races)},
      {"plan_notes", o.plan_notes},
      {"revalidation", o.revalidation ? nlohmann::json{{"retimed", o.revalidation->retimed},
                                                       {"searched", o.revalidation->searched},
                                                       {"lines", o.revalidation->lines}}
                                      : nlohmann::json(nullptr)},
      {"notes", r.notes}};
}

Table Csv(const SweepReport& r) {
  const sweep::SweepOutcome& o = r.sweep.outcome;
  Table table({{"job"},
               {"state", Table::Align::kLeft},
               {"done"},
               {"total"},
               {"new_results"},
               {"already_present"},
               {"failed"},
               {"elapsed_s"},
               {"gemms_per_minute"},
               {"gpu_busy_fraction"},
               {"host_overhead_per_gemm_s"}});
  table.AddRow({std::to_string(o.job.id), std::string(store::JobStateName(o.job.state)),
                std::to_string(o.job.done), std::to_string(o.job.total),
                std::to_string(o.progress.new_results), std::to_string(o.already_present),
                std::to_string(o.progress.failed), Fixed(o.progress.elapsed_s, 3),
                Fixed(o.progress.GemmsPerMinute(), 1), Fixed(o.progress.GpuBusyFraction(), 4),
                Fixed(o.progress.HostOverheadPerGemmS(), 4)});
  return table;
}

}  // namespace crest::cli
