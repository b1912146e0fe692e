// Runs selected for a comparison, and the stored algorithms a revalidation
// times again.
#include "crest/common/str_cat.h"
#include "key_columns.h"
#include "measurement_columns.h"
#include "sqlite_store.h"

namespace crest::store::internal {
namespace {

// Each run's answer per GEMM, as the runs' table: run_bests (each run's
// fastest verified algorithm) or, for cuBLASLt's first choice, its verified
// rows (more than one when a run measured a GEMM twice: the fastest kept).
std::string RunAnswers(tuner::AlgoChoice algo) {
  if (algo == tuner::AlgoChoice::kBest) return "run_bests";
  return StrCat("(SELECT gpu_model, cache_mode, clock_policy, software_id, ", KeyColumnList(),
                ", coalesce(job_id, 0) AS job_id, device_id, id AS measurement_id, median_us, "
                "ci_low_us, ci_high_us FROM measurements WHERE verified = 1 AND "
                "heuristic_rank = 0)");
}

}  // namespace

absl::StatusOr<std::vector<SelectedBest>> SqliteStore::NewestRunBests(const RunFilter& f) {
  // Each selected row ranked within its GPU model and GEMM (and device and
  // cuBLASLt version with each_device), newest run first (and a run's
  // fastest row first); the first of each is kept.
  auto stmt = conn_->Prepare(StrCat(
      "SELECT * FROM (SELECT rb.gpu_model, rb.dtype, rb.trans_a, rb.trans_b, rb.batch, rb.m, "
      "rb.n, rb.k, rb.job_id, rb.device_id, rb.software_id, rb.measurement_id, rb.median_us, "
      "rb.ci_low_us, rb.ci_high_us, coalesce(j.created_us, m.created_us) AS started, m.samples, "
      "m.algo_id, m.tile, m.tile_m, m.tile_n, m.stages, m.split_k, m.reduction_scheme, "
      "m.swizzle, m.custom_option, m.cluster_shape, row_number() OVER (PARTITION BY ",
      f.each_device ? "rb.device_id, s.cublaslt, " : "",
      "rb.gpu_model, rb.dtype, rb.trans_a, rb.trans_b, rb.batch, rb.m, rb.n, rb.k ORDER BY "
      "coalesce(j.created_us, m.created_us) DESC, rb.job_id DESC, rb.device_id DESC, "
      "rb.software_id DESC, rb.median_us) AS newest FROM ",
      RunAnswers(f.algo),
      " AS rb JOIN measurements AS m ON m.id = rb.measurement_id "
      "JOIN devices AS d ON d.id = rb.device_id JOIN software AS s ON s.id = rb.software_id "
      "LEFT JOIN jobs AS j ON rb.job_id <> 0 AND j.id = rb.job_id "
      "WHERE rb.cache_mode = ?1 AND rb.clock_policy = ?2 AND (?3 IS NULL OR rb.gpu_model = ?3) "
      "AND (?4 IS NULL OR rb.job_id = ?4) AND (?5 IS NULL OR s.cublaslt = ?5) "
      "AND (?6 IS NULL OR d.uuid = ?6) AND (?7 IS NULL OR d.host = ?7) "
      "AND (?8 IS NULL OR coalesce(j.created_us, m.created_us) >= ?8) "
      "AND (?9 IS NULL OR coalesce(j.created_us, m.created_us) < ?9) "
      "AND (?10 IS NULL OR rb.software_id <> ?10)) WHERE newest = 1 LIMIT ?11"));
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, tuner::CacheModeName(f.mode.cache)).Bind(2, tuner::ClockPolicyName(f.mode.clocks));
  s.Bind(3, f.gpu_model).Bind(4, f.job_id).Bind(5, f.cublaslt).Bind(6, f.device_uuid);
  s.Bind(7, f.host).Bind(8, f.from_us).Bind(9, f.to_us).Bind(10, f.except_software_id);
  s.Bind(11, f.limit > 0 ? f.limit + 1 : int64_t{-1});  // one more: to tell it is over
  std::vector<SelectedBest> out;
  auto status = s.ForEachRow("selecting runs", [&](const Statement& row) {
    SelectedBest& b = out.emplace_back();
    b.gpu_model = row.Text("gpu_model");
    b.key = ReadKey(row);
    b.best.run = {row.Int("job_id"), row.Int("device_id"), row.Int("software_id")};
    b.best.median_us = row.Double("median_us");
    b.best.ci_low_us = row.Double("ci_low_us");
    b.best.ci_high_us = row.Double("ci_high_us");
    b.best.measurement_id = row.Int("measurement_id");
    b.best.started_us = row.Int("started");
    b.samples = row.Int("samples");
    tuner::AlgoIdentity& a = b.algo;
    a.algo_id = row.Int("algo_id");
    a.tile = row.Int("tile");
    a.tile_m = static_cast<int>(row.Int("tile_m"));
    a.tile_n = static_cast<int>(row.Int("tile_n"));
    a.stages = row.Int("stages");
    a.split_k = row.Int("split_k");
    a.reduction_scheme = row.Int("reduction_scheme");
    a.swizzle = row.Int("swizzle");
    a.custom_option = row.Int("custom_option");
    a.cluster_shape = row.Int("cluster_shape");
  });
  if (!status.ok()) return status;
  if (f.limit > 0 && static_cast<int64_t>(out.size()) > f.limit) {
    return absl::ResourceExhaustedError(
        StrCat("selects more than ", f.limit, " GEMMs, the most one comparison reads"));
  }
  return out;
}

absl::StatusOr<std::vector<tuner::AlgoIdentity>> SqliteStore::StoredTopAlgos(
    const std::string& gpu_model, const GemmKey& key, const tuner::MeasureMode& mode,
    int64_t except_software_id, int count) {
  auto stmt = conn_->Prepare(StrCat(
      "SELECT m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, ", MeasurementColumnList("m."),
      " FROM measurements AS m WHERE m.gpu_model = ?1 AND m.cache_mode = ?2 AND "
      "m.clock_policy = ?3 AND m.software_id <> ?4 AND m.verified = 1 AND m.dtype = ?5 AND "
      "m.trans_a = ?6 AND m.trans_b = ?7 AND m.batch = ?8 AND m.m = ?9 AND m.n = ?10 AND "
      "m.k = ?11 ORDER BY m.median_us, m.id"));
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, gpu_model)
      .Bind(2, tuner::CacheModeName(mode.cache))
      .Bind(3, tuner::ClockPolicyName(mode.clocks));
  s.Bind(4, except_software_id);
  BindKey(s, 5, key);
  std::vector<tuner::AlgoIdentity> out;
  auto status = s.ForEachRow("reading a GEMM's stored algorithms", [&](const Statement& row) {
    if (static_cast<int>(out.size()) >= count) return;
    MeasurementRow r;
    ReadMeasurementColumns(row, r);
    for (const tuner::AlgoIdentity& seen : out) {
      if (tuner::SameConfiguration(seen, r.result.algo)) return;
    }
    out.push_back(std::move(r.result.algo));
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace crest::store::internal
