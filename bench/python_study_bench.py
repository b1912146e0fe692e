"""How fast crest.study() ranks a grid, in process and by the crest binary.

Runs one grid of d_ff rankings (GPUs x hidden sizes x TP degrees x passes,
every candidate of each window, predicted) several ways in one run, side by
side: study() in process (crest._native) on one thread and on one thread per
CPU; the answers alone (no frame) on one thread, as each answer's columns
(study()'s route), as rows read from each answer, and as the JSON
document's objects flattened to rows in Python (the route before rows); and by starting the `crest` binary
once per ranking (how the package answered before crest._native; on a
subset of the grid, scaled per ranking). Target (issue 39): <= 1 ms a
ranking in process.
Prints rankings per second and the ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_study_bench.py \
        [--crest build/clients/crest/crest] [--subset 40]
"""

import argparse
import json
import os
import subprocess
import time

import crest

GPUS = ["h100", "h200", "a100", "l40s"]
HIDDEN = list(range(2048, 8193, 256))
TPS = [1, 2, 4, 8]
PASSES = ["fwd", "train"]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def by_binary(binary, cells):
    for gpu, hidden, tp, p in cells:
        done = subprocess.run([binary, "--json", "dff", "--hidden", str(hidden), "--gpu", gpu,
                               "--tp", str(tp), "--pass", p, "--top", "0"],
                              capture_output=True, text=True, check=True)
        json.loads(done.stdout)


def answered(cells, route: str):
    """The grid's answers alone (no frame), one thread: as each answer's
    columns (what study() takes), as its rows (tuples), or as the JSON
    document's objects with each candidate flattened to a row in Python (the
    route before rows)."""
    from crest.answers import _STUDY_FIELDS, _dff_args, _flat, run_crest  # noqa: PLC0415
    for gpu, hidden, tp, p in cells:
        args = _dff_args(hidden, gpu, ratio="8/3", window=128, align=1, tokens=8192, tp=tp,
                         dtype="bf16", top=0, runs=None, pass_=p)
        if route == "columns":
            run_crest(args, columns=True)
        elif route == "rows":
            run_crest(args, row_fields=_STUDY_FIELDS)
        else:
            doc = run_crest(args)
            [tuple(_flat(c).get(k) for k in _STUDY_FIELDS) for c in doc["candidates"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crest", default=os.environ.get("CREST_BIN", "build/clients/crest/crest"))
    parser.add_argument("--subset", type=int, default=40,
                        help="rankings the binary runs (it is slow)")
    args = parser.parse_args()
    if not crest.in_process():
        raise SystemExit("crest._native is not built: nothing to measure in process")
    grid = dict(gpu=GPUS, hidden=HIDDEN, tp=TPS, pass_=PASSES)
    n = len(GPUS) * len(HIDDEN) * len(TPS) * len(PASSES)
    crest.study(gpu="h100", hidden=4096)  # warm: the calibrations, the first import
    frame, one = timed(lambda: crest.study(**grid, threads=1))
    _, many = timed(lambda: crest.study(**grid))
    grid_cells = [(g, h, t, p) for g in GPUS for h in HIDDEN for t in TPS for p in PASSES]
    _, columns_only = timed(lambda: answered(grid_cells, "columns"))
    _, rows_only = timed(lambda: answered(grid_cells, "rows"))
    _, objects_only = timed(lambda: answered(grid_cells, "objects"))
    cells = grid_cells[:args.subset]
    _, binary = timed(lambda: by_binary(args.crest, cells))
    per_binary = binary / len(cells)
    print(f"grid: {n} rankings ({len(GPUS)} GPUs x {len(HIDDEN)} hidden x {len(TPS)} tp x "
          f"{len(PASSES)} passes), {len(frame)} candidate rows; {os.cpu_count()} CPUs")
    print(f"{'way':34} {'s for the grid':>15} {'ms/ranking':>11} {'rankings/s':>11} {'ratio':>7}")
    rows = [("in process, 1 thread", one, n), (f"in process, {os.cpu_count()} threads", many, n),
            ("answers alone: columns, 1 thread", columns_only, n),
            ("answers alone: rows", rows_only, n),
            ("answers alone: JSON objects", objects_only, n),
            (f"crest binary per ranking ({len(cells)} run)", per_binary * n, n)]
    for name, seconds, count in rows:
        print(f"{name:34} {seconds:15.2f} {1e3 * seconds / count:11.2f} {count / seconds:11.0f} "
              f"{seconds / many:6.1f}x")


if __name__ == "__main__":
    main()
