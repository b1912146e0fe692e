// `crest calibrate`: fit the predictor to a database's measured (and
// imported) GEMM times for one GPU model and dtype, print the fit and write
// the calibration file.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "catalogue_reports.h"
#include "cli.h"
#include "crest/answers/answers.h"
#include "crest/common/str_cat.h"
#include "crest/store/admin.h"
#include "crest/store/store.h"
#include "crest/tuner/calibration.h"
#include "crest/tuner/calibration_fit.h"
#include "gemm_flags.h"
#include "printer.h"
#include "read_only_db.h"

namespace crest::cli {
namespace {

struct CalibrateFlags {
  std::string db;
  std::string gpu;
  std::string dtype;
  std::string source = "all";
  std::string out;
  int64_t cublaslt = 0;
  bool from_defaults = false;
  bool check = false;
  ModeFlags mode;
};

// The one GPU model the database holds rows of, unless --gpu names one.
absl::StatusOr<const tuner::GpuSpec*> ChooseGpu(const CalibrateFlags& f, store::Store& db) {
  if (!f.gpu.empty()) return tuner::FindGpu(f.gpu);
  auto stats = store::Stats(db);
  if (!stats.ok()) return stats.status();
  std::set<std::string> models;
  for (const auto& [gpu, n] : stats->measurements_by_gpu) models.insert(gpu);
  for (const auto& [gpu, n] : stats->imported_by_gpu) models.insert(gpu);
  if (models.size() != 1) {
    return absl::InvalidArgumentError(
        models.empty() ? StrCat("db: ", f.db, " holds no measured or imported GEMM times")
                       : StrCat("gpu: ", f.db, " holds several GPU models (", StrJoin(models, ", "),
                                "); choose one with --gpu"));
  }
  return tuner::FindGpu(*models.begin());
}

// Where one row came from.
struct RowSource {
  std::string source;  // "measured" or "imported"
  std::string tool;
  std::string device;
  std::string file;  // imported: the file the row came from
};

struct Rows {
  std::vector<tuner::TimedGemm> timed;
  std::vector<RowSource> from;  // one per timed row
  std::string software;         // of the measured rows
};

// One measured GEMM to fit: the run whose best it is.
struct MeasuredRow {
  store::GemmKey key;
  store::RunBest best;
};

// Of a GEMM's runs on one software version, each device's fastest run (the
// first stored on a tie), then the lower median of those across devices (a
// merged catalogue's nodes): always one run's real measurement, never an
// average. A database of one node gives its fastest run.
store::RunBest DeviceMedian(const std::vector<store::RunBest>& runs) {
  std::map<int64_t, store::RunBest> fastest;  // by device
  for (const store::RunBest& r : runs) {
    auto [it, added] = fastest.emplace(r.run.device_id, r);
    const bool faster =
        r.median_us < it->second.median_us ||
        (r.median_us == it->second.median_us && r.measurement_id < it->second.measurement_id);
    if (!added && faster) it->second = r;
  }
  std::vector<store::RunBest> devices;
  for (const auto& [device, r] : fastest) devices.push_back(r);
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
    return std::tie(a.median_us, a.run.device_id) < std::tie(b.median_us, b.run.device_id);
  });
  return devices[(devices.size() + 1) / 2 - 1];
}

// The measured GEMMs to fit (the engine's, in the chosen mode), from each
// run's best (run_bests): per GEMM, on the newest software version that
// measured it (or the --cublaslt one), DeviceMedian of its runs; in the
// order of the GEMM's columns, so a fit reads them in one order.
absl::StatusOr<std::vector<MeasuredRow>> MeasuredToFit(const CalibrateFlags& f,
                                                       const std::string& model, store::Store& db) {
  const tuner::MeasureMode mode = ToMode(f.mode);
  store::RunFilter every;  // every GEMM measured, once each
  every.gpu_model = model;
  every.mode = mode;
  store::SoftwarePin pin;
  if (f.cublaslt > 0) every.cublaslt = pin.cublaslt = f.cublaslt;
  auto measured = db.NewestRunBests(every);
  if (!measured.ok()) return measured.status();
  std::vector<store::GemmKey> wanted;
  for (const store::SelectedBest& b : *measured) wanted.push_back(b.key);
  auto versions = db.SoftwareVersions(pin);
  if (!versions.ok()) return versions.status();
  std::vector<MeasuredRow> out;
  for (int64_t software_id : *versions) {  // newest first
    if (wanted.empty()) break;
    auto runs = db.RunBests(model, wanted, software_id, mode);
    if (!runs.ok()) return runs.status();
    for (const auto& [key, list] : *runs) out.push_back({key, DeviceMedian(list)});
    std::erase_if(wanted, [&](const store::GemmKey& k) { return runs->contains(k); });
  }
  const auto order = [](const store::GemmKey& k) {
    return std::tuple(tuner::DTypeName(k.dtype), k.a_transposed, k.b_transposed, k.batch, k.m, k.n,
                      k.k);
  };
  std::sort(out.begin(), out.end(),
            [&](const auto& a, const auto& b) { return order(a.key) < order(b.key); });
  return out;
}

// The device and software of each run the answers came from.
absl::StatusOr<std::map<store::RunKey, store::RunRecord>> RunsOf(
    const std::vector<MeasuredRow>& rows, store::Store& db) {
  std::set<store::RunKey> keys;
  for (const MeasuredRow& r : rows) keys.insert(r.best.run);
  const std::vector<store::RunKey> listed(keys.begin(), keys.end());
  auto described = db.DescribeRuns(listed);
  if (!described.ok()) return described.status();
  std::map<store::RunKey, store::RunRecord> out;
  for (store::RunRecord& r : *described) out.emplace(r.key, std::move(r));
  return out;
}

// Measured answers and imported timings.
absl::StatusOr<Rows> CollectRows(const CalibrateFlags& f, const tuner::GpuSpec& gpu,
                                 store::Store& db) {
  Rows out;
  const std::string model(gpu.name);
  if (f.source != "imported") {
    auto best = MeasuredToFit(f, model, db);
    if (!best.ok()) return best.status();
    auto runs = RunsOf(*best, db);
    if (!runs.ok()) return runs.status();
    const tuner::MeasureMode mode = ToMode(f.mode);
    const std::string tool = StrCat("Crest's cuBLASLt engine, ", tuner::CacheModeName(mode.cache),
                                    " L2, ", tuner::ClockPolicyName(mode.clocks), " clocks");
    std::set<std::string> software;
    for (const auto& [key, run] : *runs) {
      if (!run.device.replay.empty()) {
        // A database holds one kind of run per GPU model: these are all replayed.
        return absl::FailedPreconditionError(StrCat(
            "db: ", db.path(), " holds replayed runs of ", model, " (", run.device.replay,
            "), not measurements; calibrate from the recorded table itself (crest db import, "
            "then --source imported)"));
      }
      software.insert(answers::DescribeProvenance(run.device, run.software));
    }
    out.software = StrJoin(software, "; ");
    for (const MeasuredRow& b : *best) {
      out.timed.push_back({b.key.Shape(), b.best.median_us});
      out.from.push_back({"measured", tool, runs->at(b.best.run).device.name, ""});
    }
  }
  if (f.source != "measured") {
    auto imported = db.ImportedTimings(model);
    if (!imported.ok()) return imported.status();
    for (const auto& r : *imported) {
      out.timed.push_back({r.timing.key.Shape(), r.timing.time_us});
      out.from.push_back({"imported", r.tool, r.device, r.source_file});
    }
  }
  return out;
}

// The provenance of the rows of one dtype.
tuner::CalibrationProvenance ProvenanceOf(const Rows& rows, tuner::DType dtype,
                                          const std::string& db) {
  std::set<std::string> sources, devices;
  std::map<std::string, std::set<std::string>> files_by_tool;
  for (size_t i = 0; i < rows.timed.size(); ++i) {
    if (rows.timed[i].gemm.dtype != dtype) continue;
    sources.insert(rows.from[i].source);
    devices.insert(rows.from[i].device);
    auto& files = files_by_tool[rows.from[i].tool];
    if (!rows.from[i].file.empty()) files.insert(rows.from[i].file);
  }
  std::vector<std::string> tools;
  for (const auto& [tool, files] : files_by_tool) {
    tools.push_back(files.empty() ? tool : StrCat(tool, " [", StrJoin(files, ", "), "]"));
  }
  tuner::CalibrationProvenance p;
  p.source = StrJoin(sources, "+");
  p.tool = StrJoin(tools, "; ");
  p.device = StrJoin(devices, ", ");
  p.software = sources.contains("measured") ? rows.software : "";
  p.database = db.substr(db.find_last_of('/') + 1);  // the file, not where it lay
  return p;
}

// The dtype to fit: --dtype, or the only one among the rows.
absl::StatusOr<tuner::DType> ChooseDtype(const CalibrateFlags& f,
                                         const std::vector<tuner::TimedGemm>& rows) {
  if (!f.dtype.empty()) return tuner::ParseDType(f.dtype);
  std::map<std::string, int> counts;
  for (const tuner::TimedGemm& r : rows) ++counts[std::string(tuner::DTypeName(r.gemm.dtype))];
  if (counts.size() == 1) return tuner::ParseDType(counts.begin()->first);
  std::vector<std::string> listed;
  for (const auto& [d, n] : counts) listed.push_back(StrCat(d, " (", n, " rows)"));
  return absl::InvalidArgumentError(
      counts.empty() ? std::string("dtype: no rows to fit")
                     : StrCat("dtype: the rows hold several dtypes: ", StrJoin(listed, ", "),
                              "; choose one with --dtype"));
}

// --check: the model in force (or the defaults, with --from-defaults)
// against the rows, nothing fitted or written.
absl::Status Check(const CalibrateFlags& f, const tuner::GpuSpec& gpu, tuner::DType dtype,
                   const std::shared_ptr<const tuner::Calibration>& active,
                   const std::vector<tuner::TimedGemm>& all, Io& io) {
  std::vector<tuner::TimedGemm> rows;
  for (const tuner::TimedGemm& r : all) {
    if (r.gemm.dtype == dtype) rows.push_back(r);
  }
  if (rows.empty()) {
    return absl::InvalidArgumentError(StrCat("db: ", f.db, " holds no ", tuner::DTypeName(dtype),
                                             " GEMM times of ", gpu.name, " (", f.source,
                                             " rows) to check against"));
  }
  CalibrationCheckReport report;
  report.db = f.db.substr(f.db.find_last_of('/') + 1);
  report.gpu = std::string(gpu.name);
  report.dtype = dtype;
  report.source = f.source;
  report.model_version = active ? active->model_version : std::string(tuner::kPredictorVersion);
  report.model = tuner::DescribeModel(gpu, active.get());
  report.metrics = tuner::Evaluate(rows, gpu, active ? active->params : gpu.model);
  PrinterFor(io)->Print(report);
  return absl::OkStatus();
}

absl::Status RunCalibrate(const CalibrateFlags& f, Io& io) {
  if (f.source != "all" && f.source != "measured" && f.source != "imported") {
    return absl::InvalidArgumentError("source: must be all, measured or imported");
  }
  auto db = OpenExisting(f.db);
  if (!db.ok()) return db.status();
  auto gpu = ChooseGpu(f, **db);
  if (!gpu.ok()) return gpu.status();
  auto rows = CollectRows(f, **gpu, **db);
  if (!rows.ok()) return rows.status();
  auto dtype = ChooseDtype(f, rows->timed);
  if (!dtype.ok()) return dtype.status();
  const auto active = f.from_defaults ? nullptr : tuner::ActiveCalibration((*gpu)->name, *dtype);
  if (f.check) return Check(f, **gpu, *dtype, active, rows->timed, io);
  tuner::FitRequest request{*gpu, *dtype, active ? active->params : (*gpu)->model,
                            ProvenanceOf(*rows, *dtype, f.db)};
  auto calibration = tuner::FitCalibration(rows->timed, request);
  if (!calibration.ok()) return calibration.status();
  const std::string path = f.out.empty() ? calibration->id + ".json" : f.out;
  std::ofstream file(path);
  file << tuner::CalibrationJson(*calibration);
  file.close();
  if (!file) return absl::InternalError(StrCat("out: cannot write '", path, "'"));
  PrinterFor(io)->Print(
      CalibrateReport{*calibration, tuner::ExplicitRates(request.before, **gpu, *dtype), path});
  return absl::OkStatus();
}

}  // namespace

Command RegisterCalibrate(CLI::App& root) {
  auto flags = std::make_shared<CalibrateFlags>();
  Command cmd;
  cmd.app = AddCommand(
      root, "calibrate",
      "Fit the predictor (tilewave-2) to a database's measured and imported GEMM times for one "
      "GPU model and dtype; print the fit and write the calibration file");
  CLI::App& app = *cmd.app;
  AddOption(app, "--db", flags->db, "database with measured or imported times").Required();
  AddOption(app, "--gpu", flags->gpu, "GPU model (default: the one the database holds)");
  AddOption(app, "--dtype", flags->dtype, "dtype (default: the one the rows hold)");
  AddOption(app, "--source", flags->source,
            "rows to fit: all, measured (Crest's engine) or imported (other tools)")
      .ShowDefault();
  AddOption(app, "--out", flags->out, "calibration file to write (default: <id>.json)");
  AddOption(app, "--cublaslt", flags->cublaslt,
            "measured rows of this cuBLASLt version only (default: each GEMM's newest version)");
  AddFlag(app, "--from-defaults", flags->from_defaults,
          "start from the catalogue's defaults, not the calibration in force (and report "
          "'before' against them)");
  AddFlag(app, "--check", flags->check,
          "fit nothing: judge the model in force for the GPU and dtype (its own calibration, "
          "one transferred from a sibling GPU, or the defaults with --from-defaults) "
          "against the rows, per GEMM and per SwiGLU d_ff window");
  AddModeFlags(app, flags->mode);
  cmd.run = [flags](Io& io) { return RunCalibrate(*flags, io); };
  return cmd;
}

}  // namespace crest::cli
