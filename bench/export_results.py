#!/usr/bin/env python3
"""Export a Crest database's measured answers as text: one CSV row per GEMM.

Each row is the GEMM's answer (its newest run's fastest verified algorithm, as
`crest compare` takes it) with its 95% interval, the algorithm, the GPU's state while
it ran (median SM clock, power, clock-event reasons, discarded samples) and
full provenance (device, driver, CUDA runtime, cuBLASLt, cache mode, clock
policy, UTC time), and how many runs measured the GEMM (`runs`; files exported
before schema 14 have `devices` there: the devices a median was taken over).
Rows are measured by Crest's engine; nothing is predicted.

Usage: export_results.py CREST.db --out FILE.csv [--name-from SPEC_NAME]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import sqlite3
import sys
from typing import List

from gpu_check_summary import ANSWERS, read_only

QUERY = f"""
WITH {ANSWERS}
SELECT d.name AS device, d.gpu_model, d.uuid, d.sm_count, s.driver, s.cuda_runtime, s.cublaslt,
       b.cache_mode, b.clock_policy, m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k,
       b.median_us, b.ci_low_us, b.ci_high_us, m.tflops, m.samples, m.discarded,
       m.tile_m, m.tile_n, m.stages, m.split_k, m.swizzle, m.cluster_shape, m.algo_id,
       m.tiles, m.waves, m.sm_clock_mhz, m.settled_clock_mhz, m.power_w, m.throttle_reasons,
       m.verified, m.created_us, b.runs
FROM answers AS b
JOIN measurements AS m ON m.id = b.measurement_id
JOIN devices AS d ON d.id = b.device_id
JOIN software AS s ON s.id = b.software_id
ORDER BY m.dtype, m.trans_a, m.trans_b, m.batch, m.m, m.n, m.k, b.cache_mode, b.clock_policy
"""

FIELDS = ["source", "device", "gpu_model", "uuid", "sm_count", "driver", "cuda_runtime",
          "cublaslt", "cache_mode", "clock_policy", "dtype", "layout", "batch", "m", "n", "k",
          "median_us", "ci_low_us", "ci_high_us", "tflops", "samples", "discarded", "tile_m",
          "tile_n", "stages", "split_k", "swizzle", "cluster_shape", "algo_id", "tiles", "waves",
          "sm_clock_mhz", "settled_clock_mhz", "power_w", "throttle_reasons", "verified",
          "measured_at_utc", "runs"]


def rows(db_path: str) -> List[dict]:
    with read_only(db_path) as con:
        con.row_factory = sqlite3.Row
        out = []
        for r in con.execute(QUERY):
            row = dict(r)
            row["source"] = "measured"
            row["layout"] = ("T" if row.pop("trans_a") else "N") + ("T" if row.pop("trans_b") else "N")
            created = row.pop("created_us")
            row["measured_at_utc"] = datetime.datetime.fromtimestamp(
                created / 1e6, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            row["throttle_reasons"] = f'0x{row["throttle_reasons"]:x}'
            for f in ("median_us", "ci_low_us", "ci_high_us"):
                row[f] = f"{row[f]:.3f}"
            for f in ("tflops", "sm_clock_mhz", "settled_clock_mhz", "power_w"):
                row[f] = f"{row[f]:.1f}"
            out.append(row)
        return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("db")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    try:
        found = rows(args.db)
    except sqlite3.Error as e:
        print(f"export_results: {args.db}: {e}", file=sys.stderr)
        return 1
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(found)
    print(f"export_results: {len(found)} GEMMs -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
