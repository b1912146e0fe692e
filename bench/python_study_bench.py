"""How fast crest.study() ranks a grid, in process and by the crest binary.

Runs one grid of d_ff rankings (GPUs x hidden sizes x TP degrees x passes,
every candidate of each window, predicted) three ways in one run, side by
side: in process (crest._native) on one thread and on one thread per CPU,
and by starting the `crest` binary once per ranking (how the package
answered before crest._native; on a subset of the grid, scaled per ranking).
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
    cells = [(g, h, t, p) for g in GPUS for h in HIDDEN for t in TPS for p in PASSES][:args.subset]
    _, binary = timed(lambda: by_binary(args.crest, cells))
    per_binary = binary / len(cells)
    print(f"grid: {n} rankings ({len(GPUS)} GPUs x {len(HIDDEN)} hidden x {len(TPS)} tp x "
          f"{len(PASSES)} passes), {len(frame)} candidate rows; {os.cpu_count()} CPUs")
    print(f"{'way':34} {'s for the grid':>15} {'ms/ranking':>11} {'rankings/s':>11} {'ratio':>7}")
    rows = [("in process, 1 thread", one, n), (f"in process, {os.cpu_count()} threads", many, n),
            (f"crest binary per ranking ({len(cells)} run)", per_binary * n, n)]
    for name, seconds, count in rows:
        print(f"{name:34} {seconds:15.2f} {1e3 * seconds / count:11.2f} {count / seconds:11.0f} "
              f"{seconds / many:6.1f}x")


if __name__ == "__main__":
    main()
