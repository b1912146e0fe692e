// Runs selected for a comparison, and the stored algorithms a revalidation
// times again.
#include <map>
#include <tuple>

#include "crest/common/str_cat.h"
#include "key_columns.h"
#include "measurement_columns.h"
#include "row_readers.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

// Each run's answer per GEMM, as the runs' table: run_bests (each run's
// fastest verified algorithm) or, for cuBLASLt's first choice, its verified
// rows (more than one when a run measured a GEMM twice: the fastest kept).
std::string RunAnswers(AlgoChoice algo) {
  return algo == AlgoChoice::kBest
             ? "run_bests"
             : "(SELECT gpu_model, cache_mode, clock_policy, software_id, coalesce(job_id, 0) "
               "AS job_id, device_id, id AS measurement_id, median_us, ci_low_us, ci_high_us "
               "FROM measurements WHERE verified = 1 AND heuristic_rank = 0)";
}

// An algorithm by its configuration (its bytes may differ by padding).
auto AlgoConfig(const AlgoIdentity& a) {
  return std::tuple(a.algo_id, a.tile, a.stages, a.split_k, a.reduction_scheme, a.swizzle,
                    a.custom_option, a.cluster_shape);
}

}  // namespace

absl::StatusOr<std::vector<SelectedBest>> SqliteStore::SelectRunBests(const RunFilter& f) {
  auto stmt = conn_->Prepare(StrCat(
      "SELECT m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, m.id, m.job_id, ",
      MeasurementColumnList("m."), ", ", kDeviceColumns,
      ", s.driver, s.cuda_runtime, s.cublaslt, rb.job_id AS run_job, rb.device_id AS run_device, "
      "rb.software_id AS run_software, rb.median_us AS run_median_us, rb.ci_low_us AS run_ci_low, "
      "rb.ci_high_us AS run_ci_high, coalesce(j.created_us, m.created_us) AS run_started FROM ",
      RunAnswers(f.algo),
      " AS rb JOIN measurements AS m ON m.id = rb.measurement_id "
      "JOIN devices AS d ON d.id = rb.device_id JOIN software AS s ON s.id = rb.software_id "
      "LEFT JOIN jobs AS j ON rb.job_id <> 0 AND j.id = rb.job_id "
      "WHERE rb.cache_mode = ?1 AND rb.clock_policy = ?2 AND (?3 IS NULL OR rb.gpu_model = ?3) "
      "AND (?4 IS NULL OR rb.job_id = ?4) AND (?5 IS NULL OR s.cublaslt = ?5) "
      "AND (?6 IS NULL OR d.uuid = ?6) AND (?7 IS NULL OR d.host = ?7) "
      "AND (?8 IS NULL OR coalesce(j.created_us, m.created_us) >= ?8) "
      "AND (?9 IS NULL OR coalesce(j.created_us, m.created_us) < ?9) "
      "AND (?10 IS NULL OR rb.software_id <> ?10)"));
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, CacheModeName(f.mode.cache)).Bind(2, ClockPolicyName(f.mode.clocks));
  s.Bind(3, f.gpu_model).Bind(4, f.job_id).Bind(5, f.cublaslt).Bind(6, f.device_uuid);
  s.Bind(7, f.host).Bind(8, f.from_us).Bind(9, f.to_us).Bind(10, f.except_software_id);
  // One entry per run and GEMM: the fastest, where a run has several.
  std::map<std::pair<RunKey, GemmKey>, SelectedBest> kept;
  auto status = s.ForEachRow("selecting runs", [&](const Statement& row) {
    SelectedBest b;
    b.best.run = {row.Int("run_job"), row.Int("run_device"), row.Int("run_software")};
    b.best.median_us = row.Double("run_median_us");
    b.best.ci_low_us = row.Double("run_ci_low");
    b.best.ci_high_us = row.Double("run_ci_high");
    b.best.measurement_id = row.Int("id");
    b.best.started_us = row.Int("run_started");
    b.row = ReadMeasurement(row);
    auto [it, added] = kept.try_emplace({b.best.run, b.row.key}, b);
    if (!added && b.best.median_us < it->second.best.median_us) it->second = std::move(b);
  });
  if (!status.ok()) return status;
  std::vector<SelectedBest> out;
  out.reserve(kept.size());
  for (auto& [key, best] : kept) out.push_back(std::move(best));
  return out;
}

absl::StatusOr<std::vector<AlgoIdentity>> SqliteStore::StoredTopAlgos(
    const std::string& gpu_model, const GemmKey& key, const MeasureMode& mode,
    int64_t except_software_id, int count) {
  auto stmt = conn_->Prepare(StrCat(
      "SELECT m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, ",
      MeasurementColumnList("m."),
      " FROM measurements AS m WHERE m.gpu_model = ?1 AND m.cache_mode = ?2 AND "
      "m.clock_policy = ?3 AND m.software_id <> ?4 AND m.verified = 1 AND m.dtype = ?5 AND "
      "m.trans_a = ?6 AND m.trans_b = ?7 AND m.batch = ?8 AND m.m = ?9 AND m.n = ?10 AND "
      "m.k = ?11 ORDER BY m.median_us, m.id"));
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, gpu_model).Bind(2, CacheModeName(mode.cache)).Bind(3, ClockPolicyName(mode.clocks));
  s.Bind(4, except_software_id);
  BindKey(s, 5, key);
  std::vector<AlgoIdentity> out;
  auto status = s.ForEachRow("reading a GEMM's stored algorithms", [&](const Statement& row) {
    if (static_cast<int>(out.size()) >= count) return;
    MeasurementRow r;
    ReadMeasurementColumns(row, r);
    for (const AlgoIdentity& seen : out) {
      if (AlgoConfig(seen) == AlgoConfig(r.result.algo)) return;
    }
    out.push_back(std::move(r.result.algo));
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace crest::store::internal
