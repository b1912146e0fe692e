#include "schema.h"

#include <array>
#include <utility>

#include "crest/common/str_cat.h"
#include "crest/store/schema_version.h"
#include "run_packs.h"

namespace crest::store::internal {
namespace {

// Migration i brings the schema from version i to i+1. Never edit a released
// step: add a new one.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 0 → 1: the core tables.
    R"sql(
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL,
  host TEXT NOT NULL,
  name TEXT NOT NULL,
  gpu_model TEXT NOT NULL,
  sm_count INTEGER NOT NULL,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  sm_clock_mhz INTEGER NOT NULL,
  memory_clock_mhz INTEGER NOT NULL,
  UNIQUE(uuid, host));
CREATE TABLE software(
  id INTEGER PRIMARY KEY,
  driver TEXT NOT NULL,
  cuda_runtime INTEGER NOT NULL,
  cublaslt INTEGER NOT NULL,
  UNIQUE(driver, cuda_runtime, cublaslt));
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  host TEXT NOT NULL,
  spec TEXT NOT NULL,
  backend TEXT NOT NULL,
  target TEXT NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('queued','running','done','failed','cancelled')),
  total INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  created_us INTEGER NOT NULL,
  started_us INTEGER,
  finished_us INTEGER,
  error TEXT NOT NULL DEFAULT '');
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  job_id INTEGER REFERENCES jobs(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  software_id INTEGER NOT NULL REFERENCES software(id),
  gpu_model TEXT NOT NULL,
  dtype TEXT NOT NULL,
  dtype_out TEXT NOT NULL,
  compute_type TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  lda INTEGER NOT NULL,
  ldb INTEGER NOT NULL,
  ldc INTEGER NOT NULL,
  algo_id INTEGER NOT NULL,
  tile INTEGER NOT NULL,
  tile_m INTEGER NOT NULL,
  tile_n INTEGER NOT NULL,
  stages INTEGER NOT NULL,
  split_k INTEGER NOT NULL,
  reduction_scheme INTEGER NOT NULL,
  swizzle INTEGER NOT NULL,
  custom_option INTEGER NOT NULL,
  cluster_shape INTEGER NOT NULL,
  algo_bytes BLOB NOT NULL,
  median_us REAL NOT NULL,
  mean_us REAL NOT NULL,
  min_us REAL NOT NULL,
  stdev_us REAL NOT NULL,
  samples INTEGER NOT NULL,
  sm_clock_mhz REAL NOT NULL,
  tflops REAL NOT NULL,
  tiles INTEGER NOT NULL,
  waves INTEGER NOT NULL,
  tile_efficiency REAL NOT NULL,
  wave_efficiency REAL NOT NULL,
  verified INTEGER NOT NULL,
  verify_note TEXT NOT NULL DEFAULT '',
  cache_mode TEXT NOT NULL,
  created_us INTEGER NOT NULL);
CREATE TABLE predictions(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  job_id INTEGER REFERENCES jobs(id),
  host TEXT NOT NULL,
  gpu_model TEXT NOT NULL,
  model_version TEXT NOT NULL,
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  time_us REAL NOT NULL,
  tflops REAL NOT NULL,
  tile_m INTEGER NOT NULL,
  tile_n INTEGER NOT NULL,
  tiles INTEGER NOT NULL,
  waves INTEGER NOT NULL,
  tile_efficiency REAL NOT NULL,
  wave_efficiency REAL NOT NULL,
  alignment_factor REAL NOT NULL,
  bound TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  UNIQUE(gpu_model, model_version, dtype, trans_a, trans_b, batch, m, n, k));
)sql",
    // 1 → 2: lookup indexes and job priorities.
    R"sql(
CREATE INDEX measurements_by_gemm
  ON measurements(gpu_model, dtype, trans_a, trans_b, batch, m, n, k);
CREATE INDEX measurements_by_job ON measurements(job_id);
CREATE INDEX predictions_by_job ON predictions(job_id);
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_spec ON jobs(backend, target, state);
-- The fastest verified measurement per GPU model, GEMM and software, kept
-- up to date by every insert and merge, so lookups read one small row per
-- key instead of every algorithm of every node.
CREATE TABLE best_measurements(
  gpu_model TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  PRIMARY KEY(gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k)) WITHOUT ROWID;
INSERT INTO best_measurements
  SELECT gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id, id,
         min(median_us)
  FROM measurements WHERE verified = 1
  GROUP BY gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k;
)sql",
    // 2 → 3: the best measurement per device, not per GPU model, so that a
    // catalogue of many nodes answers with the median of the nodes' bests
    // rather than the luckiest node.
    R"sql(
DROP TABLE best_measurements;
CREATE TABLE best_measurements(
  gpu_model TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  PRIMARY KEY(gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id))
  WITHOUT ROWID;
INSERT INTO best_measurements
  SELECT gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id, id,
         min(median_us)
  FROM measurements WHERE verified = 1
  GROUP BY gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id;
-- The answer per GPU model, software and GEMM: the device whose best is the
-- (lower) median of the devices' bests, and how many devices there were.
-- Kept up to date with best_measurements, so a lookup reads one row per key.
CREATE TABLE best_answers(
  gpu_model TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  devices INTEGER NOT NULL,
  PRIMARY KEY(gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k)) WITHOUT ROWID;
INSERT INTO best_answers
  SELECT gpu_model, software_id, dtype, trans_a, trans_b, batch, m, n, k, device_id,
         measurement_id, median_us, devices
  FROM (SELECT *,
          row_number() OVER key_devices AS rank,
          count(*) OVER (PARTITION BY gpu_model, software_id, dtype, trans_a, trans_b, batch,
                                      m, n, k) AS devices
        FROM best_measurements
        WINDOW key_devices AS (PARTITION BY gpu_model, software_id, dtype, trans_a, trans_b,
                                            batch, m, n, k
                               ORDER BY median_us, device_id))
  WHERE rank = (devices + 1) / 2;
)sql",
    // 3 → 4: the measurement method is part of a result's key; predictions
    // carry their model's expected error; timings imported from other tools
    // get a table of their own. Measurement rows get their
    // clock policy and GPU state (power, clock-event reasons, the settled
    // clock), the 95% interval of their median and the samples the policy
    // discarded. Rows of earlier versions were measured by a rule that kept
    // only samples within 3% of the warm-up (boost) clock: they are "burst".
    // The best tables are rebuilt keyed by cache mode and clock policy, so
    // warm and cold, burst and sustained never compete.
    R"sql(
ALTER TABLE measurements ADD COLUMN clock_policy TEXT NOT NULL DEFAULT 'burst';
ALTER TABLE measurements ADD COLUMN ci_low_us REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN ci_high_us REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN power_w REAL NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN throttle_reasons INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN discarded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN clock_note TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN settled_clock_mhz REAL NOT NULL DEFAULT 0;
ALTER TABLE predictions ADD COLUMN expected_error REAL NOT NULL DEFAULT 0;
DROP TABLE best_answers;
DROP TABLE best_measurements;
CREATE TABLE best_measurements(
  gpu_model TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  clock_policy TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  PRIMARY KEY(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch,
              m, n, k, device_id)) WITHOUT ROWID;
INSERT INTO best_measurements
  SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m, n,
         k, device_id, id, min(median_us)
  FROM measurements WHERE verified = 1
  GROUP BY gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m,
           n, k, device_id;
CREATE TABLE best_answers(
  gpu_model TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  clock_policy TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  ci_low_us REAL NOT NULL,
  ci_high_us REAL NOT NULL,
  devices INTEGER NOT NULL,
  PRIMARY KEY(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch,
              m, n, k)) WITHOUT ROWID;
INSERT INTO best_answers
  SELECT r.gpu_model, r.cache_mode, r.clock_policy, r.software_id, r.dtype, r.trans_a, r.trans_b,
         r.batch, r.m, r.n, r.k, r.device_id, r.measurement_id, r.median_us, m.ci_low_us,
         m.ci_high_us, r.devices
  FROM (SELECT *,
          row_number() OVER key_devices AS rank,
          count(*) OVER (PARTITION BY gpu_model, cache_mode, clock_policy, software_id, dtype,
                                      trans_a, trans_b, batch, m, n, k) AS devices
        FROM best_measurements
        WINDOW key_devices AS (PARTITION BY gpu_model, cache_mode, clock_policy, software_id,
                                            dtype, trans_a, trans_b, batch, m, n, k
                               ORDER BY median_us, device_id)) AS r
  JOIN measurements AS m ON m.id = r.measurement_id
  WHERE r.rank = (r.devices + 1) / 2;
-- GEMM timings other tools made (`crest db import`): kept apart from the
-- engine's measurements, so they never answer a lookup or a ranking as if
-- Crest had measured them; `crest calibrate` may fit to them. Importing the
-- same file again adds nothing (its content hash is part of each row).
CREATE TABLE imported(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  gpu_model TEXT NOT NULL,
  device TEXT NOT NULL,
  tool TEXT NOT NULL,
  source_file TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  host TEXT NOT NULL,
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  time_us REAL NOT NULL,
  created_us INTEGER NOT NULL,
  UNIQUE(source_hash, gpu_model, dtype, trans_a, trans_b, batch, m, n, k));
CREATE INDEX imported_by_gpu ON imported(gpu_model, dtype);
)sql",
    // 4 → 5: a generation per GPU model, moved by every result any process
    // writes, so that answers cached for one GPU outlive writes for another
    // (Store::Generation).
    R"sql(
CREATE TABLE generations(
  gpu_model TEXT PRIMARY KEY,
  measurement_id INTEGER NOT NULL DEFAULT 0,
  prediction_id INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
INSERT INTO generations(gpu_model, measurement_id, prediction_id)
  SELECT gpu_model, max(m), max(p) FROM (
    SELECT gpu_model, max(id) AS m, 0 AS p FROM measurements GROUP BY gpu_model
    UNION ALL
    SELECT gpu_model, 0 AS m, max(id) AS p FROM predictions GROUP BY gpu_model)
  GROUP BY gpu_model;
CREATE TRIGGER measurements_move_generation AFTER INSERT ON measurements BEGIN
  INSERT INTO generations(gpu_model, measurement_id) VALUES (NEW.gpu_model, NEW.id)
    ON CONFLICT(gpu_model) DO UPDATE SET measurement_id = excluded.measurement_id;
END;
CREATE TRIGGER predictions_move_generation AFTER INSERT ON predictions BEGIN
  INSERT INTO generations(gpu_model, prediction_id) VALUES (NEW.gpu_model, NEW.id)
    ON CONFLICT(gpu_model) DO UPDATE SET prediction_id = excluded.prediction_id;
END;
)sql",
    // 5 → 6: finding the job of a spec (is the same sweep already queued?)
    // by an index on its text, not by reading every job of the backend and
    // target.
    R"sql(
CREATE INDEX jobs_by_spec_text ON jobs(backend, target, spec);
)sql",
    // 6 → 7: a spec submitted again and again (a nightly job, a hostile
    // client) gathers one finished job per run; finding its newest job of a
    // state is one index probe (rowid order within an equal key), and jobs
    // by state are kept counted by triggers, so neither reads every job.
    R"sql(
DROP INDEX jobs_by_spec_text;
CREATE INDEX jobs_by_spec_state ON jobs(backend, target, spec, state);
CREATE TABLE job_counts(state TEXT PRIMARY KEY, jobs INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO job_counts(state, jobs) SELECT state, count(*) FROM jobs GROUP BY state;
CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO job_counts(state, jobs) VALUES (NEW.state, 1)
    ON CONFLICT(state) DO UPDATE SET jobs = jobs + 1;
END;
CREATE TRIGGER job_counts_update AFTER UPDATE OF state ON jobs WHEN OLD.state <> NEW.state BEGIN
  UPDATE job_counts SET jobs = jobs - 1 WHERE state = OLD.state;
  INSERT INTO job_counts(state, jobs) VALUES (NEW.state, 1)
    ON CONFLICT(state) DO UPDATE SET jobs = jobs + 1;
END;
CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_counts SET jobs = jobs - 1 WHERE state = OLD.state;
END;
)sql",
    // 7 → 8: each run's fastest verified algorithm per GEMM (a run: one job
    // on one device with one software version; job_id 0 for rows written
    // outside a job), so that an answer summing several GEMMs takes them all
    // from one run instead of the fastest of each across runs. Keyed by
    // software before the GEMM, so that a software version's runs of a
    // window are one range scan.
    R"sql(
CREATE TABLE run_bests(
  gpu_model TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  clock_policy TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  job_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  ci_low_us REAL NOT NULL,
  ci_high_us REAL NOT NULL,
  PRIMARY KEY(gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch,
              m, n, k, job_id, device_id)) WITHOUT ROWID;
INSERT INTO run_bests
  SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m, n,
         k, coalesce(job_id, 0), device_id, id, min(median_us), ci_low_us, ci_high_us
  FROM measurements WHERE verified = 1
  GROUP BY gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m,
           n, k, coalesce(job_id, 0), device_id;
)sql",
    // 8 → 9: who submitted each job (a token's name, or the peer's address
    // where crestd has no tokens), so that a client cancels only its own.
    // Results deleted by any process (Crest never deletes them; a person
    // with sqlite3 may) move the generation, so cached answers go, and take
    // their derived rows with them: the key's best in that run, on that
    // device and across devices is found again from the rows that remain,
    // so a deleted measurement never answers as measured.
    R"sql(
ALTER TABLE jobs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE generations ADD COLUMN deletions INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER predictions_deleted AFTER DELETE ON predictions BEGIN
  UPDATE generations SET deletions = deletions + 1 WHERE gpu_model = OLD.gpu_model;
END;
CREATE TRIGGER measurements_deleted AFTER DELETE ON measurements BEGIN
  UPDATE generations SET deletions = deletions + 1 WHERE gpu_model = OLD.gpu_model;
  DELETE FROM run_bests WHERE measurement_id = OLD.id;
  DELETE FROM best_measurements WHERE measurement_id = OLD.id;
  DELETE FROM best_answers
    WHERE gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k;
  INSERT INTO run_bests
    SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m,
           n, k, coalesce(job_id, 0), device_id, id, min(median_us), ci_low_us, ci_high_us
    FROM measurements
    WHERE verified = 1 AND gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k
      AND coalesce(job_id, 0) = coalesce(OLD.job_id, 0) AND device_id = OLD.device_id
    GROUP BY gpu_model
    ON CONFLICT DO NOTHING;
  INSERT INTO best_measurements
    SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m,
           n, k, device_id, id, min(median_us)
    FROM measurements
    WHERE verified = 1 AND gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k
      AND device_id = OLD.device_id
    GROUP BY gpu_model
    ON CONFLICT DO NOTHING;
  INSERT INTO best_answers
    SELECT r.gpu_model, r.cache_mode, r.clock_policy, r.software_id, r.dtype, r.trans_a,
           r.trans_b, r.batch, r.m, r.n, r.k, r.device_id, r.measurement_id, r.median_us,
           m.ci_low_us, m.ci_high_us, r.devices
    FROM (SELECT *,
            row_number() OVER (ORDER BY median_us, device_id) AS rank,
            count(*) OVER () AS devices
          FROM best_measurements
          WHERE gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
            AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
            AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
            AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k) AS r
    JOIN measurements AS m ON m.id = r.measurement_id
    WHERE r.rank = (r.devices + 1) / 2;
END;
)sql",
    // 9 → 10: each measurement's place in cuBLASLt's heuristic list, so
    // that answers can rank by the algorithm an unpinned call runs (rank 0)
    // as well as by the fastest; and the races of a study's leading
    // candidates (sweep.h), their standings and every round's times, which
    // move the results generation.
    // Rows written before this version get the place the engine stored them
    // in: it wrote a GEMM's algorithms in one insert, in the heuristic's
    // order (after dropping those failing cublasLtMatmulAlgoCheck), except
    // for exhaustive jobs, whose rows stay -1 (not from the heuristic), as
    // do rows outside any job.
    R"sql(
ALTER TABLE measurements ADD COLUMN heuristic_rank INTEGER NOT NULL DEFAULT -1;
WITH ranked AS (
  SELECT id, row_number() OVER (
           PARTITION BY job_id, device_id, software_id, gpu_model, dtype, trans_a, trans_b,
                        batch, m, n, k, cache_mode, clock_policy, created_us
           ORDER BY id) - 1 AS place
  FROM measurements
  WHERE job_id IN (SELECT id FROM jobs WHERE instr(spec, '"exhaustive":true') = 0
                                         AND instr(spec, '"exhaustive": true') = 0))
UPDATE measurements SET heuristic_rank = ranked.place FROM ranked
  WHERE ranked.id = measurements.id;
CREATE TABLE races(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  job_id INTEGER REFERENCES jobs(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  software_id INTEGER NOT NULL REFERENCES software(id),
  gpu_model TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  clock_policy TEXT NOT NULL,
  algo_choice TEXT NOT NULL,
  study TEXT NOT NULL,
  resolution REAL NOT NULL,
  rounds INTEGER NOT NULL,
  retaken INTEGER NOT NULL,
  warmup_s REAL NOT NULL,
  settled INTEGER NOT NULL,
  seconds REAL NOT NULL,
  stop_reason TEXT NOT NULL,
  created_us INTEGER NOT NULL);
CREATE TABLE race_entries(
  race_id INTEGER NOT NULL REFERENCES races(id),
  candidate INTEGER NOT NULL,
  value INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  tie_group INTEGER NOT NULL,
  rounds INTEGER NOT NULL,
  median_us REAL NOT NULL,
  ratio REAL NOT NULL,
  ratio_low REAL NOT NULL,
  ratio_high REAL NOT NULL,
  PRIMARY KEY(race_id, candidate)) WITHOUT ROWID;
CREATE TABLE race_times(
  race_id INTEGER NOT NULL REFERENCES races(id),
  round INTEGER NOT NULL,
  candidate INTEGER NOT NULL,
  time_us REAL NOT NULL,
  PRIMARY KEY(race_id, round, candidate)) WITHOUT ROWID;
CREATE INDEX races_by_job ON races(job_id, study);
-- A race changes the d_ff answers of its GPU model: it moves the generation
-- that cached answers are kept by, as results do.
ALTER TABLE generations ADD COLUMN race_id INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER races_move_generation AFTER INSERT ON races BEGIN
  INSERT INTO generations(gpu_model, race_id) VALUES (NEW.gpu_model, NEW.id)
    ON CONFLICT(gpu_model) DO UPDATE SET race_id = excluded.race_id;
END;
CREATE TRIGGER races_deleted AFTER DELETE ON races BEGIN
  UPDATE generations SET deletions = deletions + 1 WHERE gpu_model = OLD.gpu_model;
END;
)sql",
    // 10 → 11: the error rate a race's verdicts hold at (family-wise, over
    // every pair and look). 0: a race of the first procedure (a 95% test of
    // each candidate against the leader at every round, uncorrected), whose
    // verdicts hold at no stated rate.
    R"sql(
ALTER TABLE races ADD COLUMN error_rate REAL NOT NULL DEFAULT 0;
)sql",
    // 11 → 12: a device that is not a GPU but the replay backend's simulated
    // one (the recorded table, its hash, noise, seed and drift); '' for a
    // real GPU. Answers built on its runs say "replayed".
    R"sql(
ALTER TABLE devices ADD COLUMN replay TEXT NOT NULL DEFAULT '';
)sql",
    // 12 → 13: run_bests by run, so that the newest run's answer to a
    // window is read without reading every older run's (ListRuns walks it
    // one run at a time; RunBests of one run seeks in it). It holds every
    // column answers read, so no row is looked up again in the table.
    R"sql(
CREATE INDEX run_bests_by_run ON run_bests(gpu_model, cache_mode, clock_policy, software_id,
                                           job_id, device_id, dtype, trans_a, trans_b, batch, m,
                                           n, k, measurement_id, median_us, ci_low_us, ci_high_us);
)sql",
    // 13 → 14: the tables of the first answer rule go: best_measurements
    // (each device's fastest across its runs) and best_answers (the median
    // device of those) were kept on every insert but no answer read them
    // since answers take each GEMM from one run (run_bests). A deleted
    // measurement now re-derives its run's best alone.
    R"sql(
DROP TRIGGER measurements_deleted;
DROP TABLE best_answers;
DROP TABLE best_measurements;
CREATE TRIGGER measurements_deleted AFTER DELETE ON measurements BEGIN
  UPDATE generations SET deletions = deletions + 1 WHERE gpu_model = OLD.gpu_model;
  DELETE FROM run_bests WHERE measurement_id = OLD.id;
  INSERT INTO run_bests
    SELECT gpu_model, cache_mode, clock_policy, software_id, dtype, trans_a, trans_b, batch, m,
           n, k, coalesce(job_id, 0), device_id, id, min(median_us), ci_low_us, ci_high_us
    FROM measurements
    WHERE verified = 1 AND gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k
      AND coalesce(job_id, 0) = coalesce(OLD.job_id, 0) AND device_id = OLD.device_id
    GROUP BY gpu_model
    ON CONFLICT DO NOTHING;
END;
)sql",
    // 14 → 15: run_bests by run, keyed by an integer: each run (GPU model,
    // cache mode, clock policy, software, job, device) gets an id in
    // run_ids, and run_rows holds run_bests' rows under it, so reading one
    // run's rows compares one integer per row where run_bests_by_run
    // compared six columns, three of them texts (a train ranking's SQLite
    // stepping 0.77x). Kept from run_bests by triggers, so every writer of run_bests
    // (inserts, merges, a deleted measurement's re-derived best, a person
    // with sqlite3) keeps it. A run's id stays when its rows go; readers
    // ask run_rows whether it has any.
    R"sql(
CREATE TABLE run_ids(
  id INTEGER PRIMARY KEY,
  gpu_model TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  clock_policy TEXT NOT NULL,
  software_id INTEGER NOT NULL REFERENCES software(id),
  job_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  UNIQUE(gpu_model, cache_mode, clock_policy, software_id, job_id, device_id));
CREATE TABLE run_rows(
  run_id INTEGER NOT NULL REFERENCES run_ids(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  median_us REAL NOT NULL,
  ci_low_us REAL NOT NULL,
  ci_high_us REAL NOT NULL,
  PRIMARY KEY(run_id, dtype, trans_a, trans_b, batch, m, n, k)) WITHOUT ROWID;
INSERT INTO run_ids(gpu_model, cache_mode, clock_policy, software_id, job_id, device_id)
  SELECT DISTINCT gpu_model, cache_mode, clock_policy, software_id, job_id, device_id
  FROM run_bests ORDER BY 1, 2, 3, 4, 5, 6;
INSERT INTO run_rows
  SELECT r.id, b.dtype, b.trans_a, b.trans_b, b.batch, b.m, b.n, b.k, b.measurement_id,
         b.median_us, b.ci_low_us, b.ci_high_us
  FROM run_bests b JOIN run_ids r
    ON r.gpu_model = b.gpu_model AND r.cache_mode = b.cache_mode
       AND r.clock_policy = b.clock_policy AND r.software_id = b.software_id
       AND r.job_id = b.job_id AND r.device_id = b.device_id
  ORDER BY 1, 2, 3, 4, 5, 6, 7, 8;
DROP INDEX run_bests_by_run;
CREATE TRIGGER run_bests_inserted AFTER INSERT ON run_bests BEGIN
  INSERT INTO run_ids(gpu_model, cache_mode, clock_policy, software_id, job_id, device_id)
    VALUES (NEW.gpu_model, NEW.cache_mode, NEW.clock_policy, NEW.software_id, NEW.job_id,
            NEW.device_id)
    ON CONFLICT DO NOTHING;
  INSERT INTO run_rows
    SELECT id, NEW.dtype, NEW.trans_a, NEW.trans_b, NEW.batch, NEW.m, NEW.n, NEW.k,
           NEW.measurement_id, NEW.median_us, NEW.ci_low_us, NEW.ci_high_us
    FROM run_ids
    WHERE gpu_model = NEW.gpu_model AND cache_mode = NEW.cache_mode
      AND clock_policy = NEW.clock_policy AND software_id = NEW.software_id
      AND job_id = NEW.job_id AND device_id = NEW.device_id;
END;
CREATE TRIGGER run_bests_deleted AFTER DELETE ON run_bests BEGIN
  DELETE FROM run_rows
    WHERE run_id = (SELECT id FROM run_ids
                    WHERE gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
                      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
                      AND job_id = OLD.job_id AND device_id = OLD.device_id)
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k;
END;
-- An update (a faster measurement of the same run and GEMM) is the old row
-- out and the new one in, whichever columns it changed.
CREATE TRIGGER run_bests_updated AFTER UPDATE ON run_bests BEGIN
  DELETE FROM run_rows
    WHERE run_id = (SELECT id FROM run_ids
                    WHERE gpu_model = OLD.gpu_model AND cache_mode = OLD.cache_mode
                      AND clock_policy = OLD.clock_policy AND software_id = OLD.software_id
                      AND job_id = OLD.job_id AND device_id = OLD.device_id)
      AND dtype = OLD.dtype AND trans_a = OLD.trans_a AND trans_b = OLD.trans_b
      AND batch = OLD.batch AND m = OLD.m AND n = OLD.n AND k = OLD.k;
  INSERT INTO run_ids(gpu_model, cache_mode, clock_policy, software_id, job_id, device_id)
    VALUES (NEW.gpu_model, NEW.cache_mode, NEW.clock_policy, NEW.software_id, NEW.job_id,
            NEW.device_id)
    ON CONFLICT DO NOTHING;
  INSERT INTO run_rows
    SELECT id, NEW.dtype, NEW.trans_a, NEW.trans_b, NEW.batch, NEW.m, NEW.n, NEW.k,
           NEW.measurement_id, NEW.median_us, NEW.ci_low_us, NEW.ci_high_us
    FROM run_ids
    WHERE gpu_model = NEW.gpu_model AND cache_mode = NEW.cache_mode
      AND clock_policy = NEW.clock_policy AND software_id = NEW.software_id
      AND job_id = NEW.job_id AND device_id = NEW.device_id;
END;
)sql",
    // 15 → 16: a finished job's runs packed by line (run_packs.h), so that
    // a window's answer reads a few blobs where it stepped a row a GEMM.
    // A pack holds every row its run has on its line; any change to the
    // run's rows (an insert, a merge, a deleted measurement, a person with
    // sqlite3) drops the run's packs in the same transaction, and readers
    // read the rows until the run is packed again.
    R"sql(
CREATE TABLE run_packs(
  run_id INTEGER NOT NULL REFERENCES run_ids(id),
  dtype TEXT NOT NULL,
  trans_a INTEGER NOT NULL,
  trans_b INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  varying INTEGER NOT NULL,
  m INTEGER NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  rows BLOB NOT NULL,
  PRIMARY KEY(run_id, dtype, trans_a, trans_b, batch, varying, m, n, k)) WITHOUT ROWID;
CREATE TRIGGER run_rows_inserted AFTER INSERT ON run_rows BEGIN
  DELETE FROM run_packs WHERE run_id = NEW.run_id;
END;
CREATE TRIGGER run_rows_deleted AFTER DELETE ON run_rows BEGIN
  DELETE FROM run_packs WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER run_rows_updated AFTER UPDATE ON run_rows BEGIN
  DELETE FROM run_packs WHERE run_id = OLD.run_id OR run_id = NEW.run_id;
END;
)sql",
};

// What an upgrade does beyond a migration's SQL, after it (in the same
// transaction), by the version it upgrades from: 15 → 16 packs the runs of
// the jobs finished before it.
constexpr std::pair<int, absl::Status (*)(Connection&)> kStepsAfter[] = {{15, PackDoneRuns}};

}  // namespace

absl::StatusOr<int> SchemaVersion(Connection& conn) {
  auto stmt = conn.Prepare("PRAGMA user_version");
  if (!stmt.ok()) return stmt.status();
  auto row = (*stmt)->Step("reading the schema version");
  if (!row.ok()) return row.status();
  const auto version = static_cast<int>((*stmt)->Int("user_version"));
  (*stmt)->Reset();
  return version;
}

absl::StatusOr<int> CheckOwnership(Connection& conn) {
  auto version = SchemaVersion(conn);
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(StrCat(
        conn.path(), ": database schema version ", *version, " is newer than this crest supports (",
        kSchemaVersion, "); use a newer crest. The file was not changed."));
  }
  if (*version > 0) return *version;
  auto stmt = conn.Prepare("SELECT count(*) AS objects FROM sqlite_master");
  if (!stmt.ok()) return stmt.status();
  auto row = (*stmt)->Step("reading the schema");
  if (!row.ok()) return row.status();
  const int64_t objects = (*stmt)->Int("objects");
  (*stmt)->Reset();
  if (objects != 0) {
    return absl::FailedPreconditionError(
        StrCat(conn.path(), ": not a Crest database (it holds other tables and no Crest schema)"));
  }
  return 0;  // an empty file: ours to create
}

absl::Status Migrate(Connection& conn, bool read_only, int version, int target) {
  if (read_only) {
    if (version == kSchemaVersion) return absl::OkStatus();
    if (version == 0) {
      return absl::FailedPreconditionError(
          StrCat(conn.path(), ": not a Crest database (no Crest schema)"));
    }
    return absl::FailedPreconditionError(
        StrCat(conn.path(), ": database schema version ", version, " is older than this crest's (",
               kSchemaVersion,
               "); open it once for writing (e.g. `crest db check --upgrade`) to upgrade it"));
  }
  if (version >= target) return absl::OkStatus();
  if (auto s = conn.Begin("starting the schema upgrade"); !s.ok()) return s;
  // Another process may have migrated between our read and our lock.
  auto locked = CheckOwnership(conn);
  if (!locked.ok()) {
    conn.Rollback();
    return locked.status();
  }
  for (int v = *locked; v < target; ++v) {
    absl::Status s = conn.Exec(kMigrations[static_cast<size_t>(v)],
                               StrCat("upgrading the schema from version ", v, " to ", v + 1));
    for (const auto& [from, step] : kStepsAfter) {
      if (s.ok() && from == v) s = step(conn);
    }
    if (!s.ok()) {
      conn.Rollback();
      return s;
    }
  }
  if (auto s = conn.Exec(StrCat("PRAGMA user_version=", target), "recording the schema version");
      !s.ok()) {
    conn.Rollback();
    return s;
  }
  return conn.Commit("committing the schema upgrade");
}

}  // namespace crest::store::internal
