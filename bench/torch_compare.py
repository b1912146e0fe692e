#!/usr/bin/env python3
"""PyTorch side by side with Crest, under Crest's measurement protocol.

The same shapes as a Crest sweep (the seed bmm case, or the SwiGLU MLP d_ff
window), timed through torch.matmul / torch.bmm the way Crest's engine times
its own algorithms (docs/measurement.md):
  - operands drawn like Crest's generator: ±[0.25, 1) with random signs, never
    zero, rounded to the dtype;
  - cold L2: enough operand copies that together they are at least twice the
    L2, rotated between launches;
  - sustained clocks: the GPU is kept busy for --warmup-s seconds first, so it
    runs power-capped as in training (the clock and power read at its end are
    the settled state), and before each shape's samples the idle gap that
    operand set-up and graph capture left is made up as Crest's engine does
    (its reload): the shape's graph is replayed for up to three times the gap
    (at most 1 s, at least --settle-s), less once the SM clock is back within
    1% of the settled clock or the power within 1% of the settled power;
  - the SM clock and power during the samples are read through NVML (pynvml,
    when installed) and written with the times, so two runs can be compared
    at the clock each ran at;
  - each sample is one replay of a CUDA graph of enough launches to run
    >= 1 ms, timed with CUDA events; samples until the median's 95% interval
    (order statistics) is within 1% or 0.25 s of sampling per shape.
Writes one CSV row per GEMM: the tool (PyTorch and its version) and device, the
shape, median, interval, samples, TFLOP/s, SM clock and power.

Usage: torch_compare.py {seed-bmm|mlp} --out FILE.csv [--hidden 4096] [--window 128]
       [--k-from 10820 --k-to 11020 --k-step 4] [--quick]
       torch_compare.py db --db CREST.db --out FILE.csv
       torch_compare.py race --db CREST.db --out FILE.csv
The `db` study times every distinct GEMM a Crest database measured (any
layout, batch and dtype), so any Crest sweep gets its PyTorch side by side.
The `race` study takes the newest race in a Crest database (the d_ff
candidates a sweep raced, docs/measurement.md) and races the same candidates'
whole MLPs through PyTorch the way Crest did: untimed load until settled,
then rounds timing each undecided candidate once in an order rotated every
round, paired ratios to the leader with Student-t 95% intervals over the log
ratios, slower / tied (within Crest's resolution) / unresolved when the
budget (200 rounds, 60 s) runs out. One CSV row per candidate, with Crest's
verdict and ratio beside PyTorch's.
Needs PyTorch with CUDA (the GPU machine has it; this machine does not).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

MAX_COPIES = 64
TARGET_SAMPLE_US = 1000.0
MAX_LAUNCHES = 256
MIN_SAMPLES = 5
MAX_NOISE = 0.01
MAX_SAMPLING_S = 0.25
SETTLE_S = 0.0           # a floor on the reload [s]
RELOAD_FACTOR = 3.0      # Crest's EngineTuning: reload for up to this times the idle gap…
MAX_RELOAD_S = 1.0       # …at most this long…
RELOAD_TOLERANCE = 0.01  # …less once clock or power are back within this of the settled state
RACE_MIN_ROUNDS = 5
RACE_MAX_ROUNDS = 200
RACE_MAX_S = 60.0
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def seed_bmm_shapes(k_from: int, k_to: int, k_step: int, extra: Sequence[int] = (10922,)):
    """The common script's bmm: batch 4, M=N=4096, K=d_ff, fp16, row-major NN."""
    ks = sorted(set(range(k_from, k_to + 1, k_step)) | set(extra))
    return [{"name": "bmm", "batch": 4, "m": 4096, "n": 4096, "k": k, "dtype": "fp16",
             "layout": "NN"} for k in ks]


def mlp_shapes(hidden: int, window: int, tokens: int = 8192, ratio: Fraction = Fraction(8, 3)):
    """The SwiGLU MLP forward GEMMs (gate+up fused, down) of every d_ff in the window."""
    base = math.floor(ratio * hidden)
    out = []
    for d_ff in range(base - window, base + window + 1):
        out.append({"name": "mlp_gate_up.fwd", "batch": 1, "m": tokens, "n": 2 * d_ff,
                    "k": hidden, "dtype": "bf16", "layout": "NT", "d_ff": d_ff})
        out.append({"name": "mlp_down.fwd", "batch": 1, "m": tokens, "n": hidden, "k": d_ff,
                    "dtype": "bf16", "layout": "NT", "d_ff": d_ff})
    return out


def db_shapes(db_path: str) -> List[Dict]:
    """Every distinct GEMM measured in a Crest database, in a stable order."""
    from gpu_check_summary import read_only  # noqa: PLC0415 (bench/, beside this file)

    with read_only(db_path) as con:
        rows = con.execute(
            "SELECT DISTINCT dtype, trans_a, trans_b, m, n, k, batch FROM measurements "
            "WHERE dtype IN ('fp16', 'bf16', 'fp32') ORDER BY dtype, trans_a, trans_b, batch, m, n, k"
        ).fetchall()
    return [{"name": "gemm", "batch": b, "m": m, "n": n, "k": k, "dtype": dt,
             "layout": ("T" if ta else "N") + ("T" if tb else "N")}
            for dt, ta, tb, m, n, k, b in rows]


def operand_bytes(s: Dict) -> int:
    e = ELEMENT_BYTES[s["dtype"]]
    return s["batch"] * ((s["m"] + s["n"]) * s["k"] + s["m"] * s["n"]) * e


def copies_for(s: Dict, l2_bytes: int) -> int:
    """Crest's cold-L2 rule: copies together at least twice the L2, at most 64."""
    one = operand_bytes(s)
    return max(1, min(MAX_COPIES, -(-2 * l2_bytes // one)))


def launches_per_sample(one_launch_us: float, copies: int) -> int:
    by_time = math.ceil(TARGET_SAMPLE_US / max(one_launch_us, 0.1))
    return max(1, min(MAX_LAUNCHES, max(by_time, copies)))


def median(values: Sequence[float]) -> float:
    v = sorted(values)
    n = len(v)
    if n == 0:
        return 0.0
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def median_interval(samples: Sequence[float]) -> Tuple[float, float]:
    """Crest's 95% order-statistic interval of the median (the range below 6 samples)."""
    v = sorted(samples)
    n = len(v)
    if n == 0:
        return 0.0, 0.0
    below = math.comb(n, 0) / 2 ** n
    l = 1
    while l + 1 <= (n + 1) // 2:
        below += math.comb(n, l) / 2 ** n
        if below > 0.025:
            break
        l += 1
    return v[l - 1], v[n - l]


def converged(samples: Sequence[float]) -> bool:
    if len(samples) < MIN_SAMPLES:
        return False
    lo, hi = median_interval(samples)
    return (hi - lo) / 2 <= MAX_NOISE * median(samples)


def reload_budget_s(gap_s: float, floor_s: float = SETTLE_S) -> float:
    """How long Crest's engine loads the GPU after an idle gap, at most."""
    return max(floor_s, min(MAX_RELOAD_S, RELOAD_FACTOR * gap_s))


def back_at_load(clock_mhz: float, power_w: float, settled: Tuple[float, float]) -> bool:
    """Crest's reload stops once clock or power are back at the settled state."""
    s_clock, s_power = settled
    return ((clock_mhz > 0 and s_clock > 0 and clock_mhz <= s_clock * (1 + RELOAD_TOLERANCE)) or
            (power_w > 0 and s_power > 0 and power_w >= s_power * (1 - RELOAD_TOLERANCE)))


def parse_study(key: str) -> Dict:
    """Crest's study key ("dff hidden=4096 tokens=8192 tp=1 bf16 fwd fused") as fields."""
    words = key.split()
    if len(words) != 7 or words[0] != "dff":
        raise ValueError(f"not a d_ff study key: {key!r}")
    fields = dict(w.split("=", 1) for w in words[1:4])
    return {"hidden": int(fields["hidden"]), "tokens": int(fields["tokens"]),
            "tp": int(fields["tp"]), "dtype": words[4], "pass": words[5],
            "fused": words[6] == "fused"}


def paired_ratio(times: List[List[float]], a: int, b: int) -> Tuple[float, float, float]:
    """Crest's paired ratio of a over b: the geometric mean of their ratios in the rounds
    both were timed in, with its Student-t 95% interval (infinite with one round)."""
    logs = [math.log(r[a] / r[b]) for r in times if r[a] > 0 and r[b] > 0]
    if not logs:
        return 1.0, 0.0, math.inf
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return math.exp(mean), 0.0, math.inf
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    half = (T975[n - 2] if n - 1 <= 30 else 1.96) * sd / math.sqrt(n)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def verdict(low: float, high: float, resolution: float) -> str:
    """Crest's verdict on a paired ratio's interval."""
    if low > 1:
        return "slower"
    if low >= 1 - resolution and high <= 1 + resolution:
        return "tied"
    return "unresolved"


def mlp_gemms(study: Dict, d_ff: int) -> List[Dict]:
    """One candidate's SwiGLU MLP GEMMs as Crest's study key describes them (forward)."""
    if study["pass"] != "fwd" or study["tp"] != 1:
        raise ValueError("the race study times forward MLPs at tp=1 only")
    m, h = study["tokens"], study["hidden"]
    ups = ([{"name": "mlp_gate_up.fwd", "n": 2 * d_ff}] if study["fused"] else
           [{"name": "mlp_gate.fwd", "n": d_ff}, {"name": "mlp_up.fwd", "n": d_ff}])
    out = [{**u, "batch": 1, "m": m, "k": h, "dtype": study["dtype"], "layout": "NT"}
           for u in ups]
    out.append({"name": "mlp_down.fwd", "batch": 1, "m": m, "n": h, "k": d_ff,
                "dtype": study["dtype"], "layout": "NT"})
    return out


def newest_race(db_path: str) -> Dict:
    """The newest race in a Crest database: its study, resolution and standings."""
    from gpu_check_summary import read_only  # noqa: PLC0415

    with read_only(db_path) as con:
        race = con.execute("SELECT id, study, resolution FROM races "
                           "ORDER BY created_us DESC, id DESC LIMIT 1").fetchone()
        if race is None:
            raise ValueError(f"{db_path} holds no race (a measuring sweep of a d_ff study "
                             "stores one)")
        entries = con.execute("SELECT value, verdict, ratio, ratio_low, ratio_high FROM "
                              "race_entries WHERE race_id = ? ORDER BY tie_group, ratio",
                              (race[0],)).fetchall()
    return {"race_id": race[0], "study": race[1], "resolution": race[2],
            "crest": [{"d_ff": v, "verdict": vd, "ratio": r, "ratio_low": lo, "ratio_high": hi}
                      for v, vd, r, lo, hi in entries]}


def flops(s: Dict) -> float:
    return 2.0 * s["batch"] * s["m"] * s["n"] * s["k"]


class Nvml:
    """SM clock [MHz] and power [W] of device 0 through pynvml; 0, 0 without it."""

    def __init__(self):
        self.handle = None
        try:
            import pynvml  # noqa: PLC0415 (nvidia-ml-py; the GPU machine has it)

            pynvml.nvmlInit()
            self.pynvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # noqa: BLE001 (no NVML: clocks stay unknown, as in Crest)
            self.handle = None

    def read(self) -> Tuple[float, float]:
        if self.handle is None:
            return 0.0, 0.0
        try:
            clock = self.pynvml.nvmlDeviceGetClockInfo(self.handle, self.pynvml.NVML_CLOCK_SM)
            return float(clock), self.pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
        except Exception:  # noqa: BLE001
            return 0.0, 0.0


class Timer:
    """The torch side: operands, graphs and events on the current device."""

    def __init__(self, torch, settle_s: float = SETTLE_S):
        self.torch = torch
        props = torch.cuda.get_device_properties(0)
        self.l2_bytes = int(getattr(props, "L2_cache_size", 50 << 20))
        self.name = props.name
        self.settle_s = settle_s
        self.nvml = Nvml()
        self.last_busy = time.time()
        self.settled: Tuple[float, float] = (0.0, 0.0)  # clock, power at the warm-up's end

    def _busy(self) -> None:
        self.torch.cuda.synchronize()
        self.last_busy = time.time()

    def _reload(self, graph) -> None:
        """Makes up the idle gap since the device last worked, as Crest's engine does:
        replays until the readings are back at the settled state or the budget is spent."""
        start = time.time()
        end = start + reload_budget_s(start - self.last_busy, self.settle_s)
        while True:
            graph.replay()
            self._busy()
            if time.time() >= end:
                break
            if self.settled and back_at_load(*self.nvml.read(), self.settled):
                break

    def _operand(self, shape, dtype):
        t = self.torch
        magnitude = t.rand(shape, device="cuda") * 0.75 + 0.25
        sign = t.where(t.rand(shape, device="cuda") < 0.5, -1.0, 1.0)
        return (magnitude * sign).to(dtype)

    def _gemm(self, s: Dict):
        """A callable running the GEMM on copy i, and the number of copies."""
        t = self.torch
        dtype = {"fp16": t.float16, "bf16": t.bfloat16, "fp32": t.float32}[s["dtype"]]
        copies = copies_for(s, self.l2_bytes)
        b, m, n, k = s["batch"], s["m"], s["n"], s["k"]
        # Crest's layouts on row-major data: A used M×K, stored [M,K] ("N") or
        # [K,M] ("T"); B used K×N, stored [K,N] ("N") or [N,K] ("T").
        layout = s.get("layout", "NN" if s["name"] == "bmm" else "NT")
        lead = (b,) if b > 1 or s["name"] == "bmm" else ()
        a_shape = lead + ((k, m) if layout[0] == "T" else (m, k))
        b_shape = lead + ((n, k) if layout[1] == "T" else (k, n))
        ops = []
        for _ in range(copies):
            a, w = self._operand(a_shape, dtype), self._operand(b_shape, dtype)
            if layout[0] == "T":
                a = a.transpose(-1, -2)
            if layout[1] == "T":
                w = w.transpose(-1, -2)
            ops.append((a, w, t.empty(lead + (m, n), device="cuda", dtype=dtype)))

        def run(i: int):
            a, w, c = ops[i % copies]
            t.matmul(a, w, out=c)
        return run, copies

    def _graph(self, run, launches: int):
        t = self.torch
        stream = t.cuda.Stream()
        stream.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(stream):
            for i in range(3):
                run(i)
        t.cuda.current_stream().wait_stream(stream)
        graph = t.cuda.CUDAGraph()
        with t.cuda.graph(graph):
            for i in range(launches):
                run(i)
        return graph

    def _elapsed_us(self, work) -> float:
        t = self.torch
        start, stop = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        start.record()
        work()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3

    def warm_up(self, s: Dict, seconds: float):
        run, copies = self._gemm(s)
        end = time.time() + seconds
        i = 0
        while time.time() < end:
            for _ in range(8):
                run(i)
                i += 1
            self._busy()
        self.settled = self.nvml.read()

    def measure(self, s: Dict) -> Dict:
        run, copies = self._gemm(s)
        for i in range(copies):
            run(i)
        one = self._elapsed_us(lambda: run(0))
        launches = launches_per_sample(one, copies)
        graph = self._graph(run, launches)
        self._reload(graph)
        samples: List[float] = []
        clocks: List[float] = []
        power: List[float] = []
        sampling = 0.0
        while not converged(samples) and (sampling < MAX_SAMPLING_S or len(samples) < MIN_SAMPLES):
            t0 = time.time()
            samples.append(self._elapsed_us(graph.replay) / launches)
            self.last_busy = time.time()
            clock_mhz, power_w = self.nvml.read()
            clocks.append(clock_mhz)
            power.append(power_w)
            sampling += time.time() - t0
        lo, hi = median_interval(samples)
        med = median(samples)
        return {**s, "median_us": med, "ci_low_us": lo, "ci_high_us": hi,
                "samples": len(samples), "launches_per_sample": launches, "copies": copies,
                "tflops": flops(s) / med / 1e6, "sm_clock_mhz": median(clocks),
                "power_w": median(power)}


class MlpRacer:
    """Whole-MLP candidates raced through PyTorch in Crest's rounds."""

    def __init__(self, timer: Timer, study: Dict, d_ffs: List[int]):
        self.timer = timer
        self.graphs = []  # per candidate: (graph, launches) per GEMM
        for d_ff in d_ffs:
            parts = []
            for s in mlp_gemms(study, d_ff):
                run, copies = timer._gemm(s)
                parts.append((timer._graph(run, copies), copies))
            self.graphs.append(parts)

    def time(self, c: int) -> float:
        """One run of candidate c's MLP, every GEMM once (per launch) [µs]."""
        total = 0.0
        for graph, launches in self.graphs[c]:
            total += self.timer._elapsed_us(graph.replay) / launches
        self.timer.last_busy = time.time()
        return total

    def race(self, resolution: float) -> Tuple[List[List[float]], List[str], int]:
        n = len(self.graphs)
        self.timer._reload(self.graphs[0][0][0])
        times: List[List[float]] = []
        racing = [True] * n
        verdicts = ["unresolved"] * n
        start = time.time()
        leader = 0
        while True:
            rnd = [0.0] * n
            for i in range(n):
                c = (i + len(times)) % n
                if racing[c]:
                    rnd[c] = self.time(c)
            times.append(rnd)
            live = [c for c in range(n) if racing[c]]
            leader = min(live, key=lambda c: sum(math.log(r[c]) for r in times if r[c] > 0) /
                         max(1, sum(1 for r in times if r[c] > 0)))
            undecided = False
            if len(times) >= RACE_MIN_ROUNDS:
                for c in live:
                    if c == leader:
                        continue
                    _, lo, hi = paired_ratio(times, c, leader)
                    verdicts[c] = verdict(lo, hi, resolution)
                    racing[c] = verdicts[c] != "slower"
                    undecided = undecided or verdicts[c] == "unresolved"
                if not undecided:
                    break
            if len(times) >= RACE_MAX_ROUNDS or time.time() - start >= RACE_MAX_S:
                break
        verdicts[leader] = "leader"
        return times, verdicts, leader


def race_rows(timer: Timer, crest: Dict) -> List[Dict]:
    """PyTorch's race of the candidates of Crest's race `crest` (newest_race)."""
    study = parse_study(crest["study"])
    d_ffs = [e["d_ff"] for e in crest["crest"]]
    times, verdicts, leader = MlpRacer(timer, study, d_ffs).race(crest["resolution"])
    rows = []
    for c, e in enumerate(crest["crest"]):
        ratio, lo, hi = paired_ratio(times, c, leader)
        own = [r[c] for r in times if r[c] > 0]
        rows.append({"race_id": crest["race_id"], "study": crest["study"], "d_ff": e["d_ff"],
                     "rounds": len(own), "median_us": median(own), "verdict": verdicts[c],
                     "ratio": ratio, "ratio_low": lo, "ratio_high": hi,
                     "crest_verdict": e["verdict"], "crest_ratio": e["ratio"],
                     "sm_clock_mhz": timer.nvml.read()[0]})
    return rows


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("study", choices=["seed-bmm", "mlp", "db", "race"])
    p.add_argument("--db", help="the Crest database whose GEMMs (db) or newest race (race) "
                   "to time")
    p.add_argument("--out", required=True)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--window", type=int, default=128)
    p.add_argument("--k-from", type=int, default=10820)
    p.add_argument("--k-to", type=int, default=11020)
    p.add_argument("--k-step", type=int, default=4)
    p.add_argument("--warmup-s", type=float, default=3.0)
    p.add_argument("--settle-s", type=float, default=SETTLE_S,
                   help="seconds each shape's graph is replayed before its samples, at least "
                        "(the reload after the idle gap may take longer)")
    p.add_argument("--quick", action="store_true", help="window 16, K step 40")
    return p.parse_args(argv)


def shapes_for(args) -> List[Dict]:
    if args.study == "db":
        return db_shapes(args.db)
    if args.study == "seed-bmm":
        return seed_bmm_shapes(args.k_from, args.k_to, 40 if args.quick else args.k_step)
    return mlp_shapes(args.hidden, 16 if args.quick else args.window)


def run_race(torch, args) -> int:
    try:
        crest = newest_race(args.db)
        study = parse_study(crest["study"])
        first = mlp_gemms(study, crest["crest"][0]["d_ff"])
    except (ValueError, IndexError) as e:
        print(f"torch_compare: {e}", file=sys.stderr)
        return 2
    timer = Timer(torch, args.settle_s)
    timer.warm_up(first[0], args.warmup_s)
    rows = race_rows(timer, crest)
    source = {"tool": f"torch {torch.__version__} (torch.matmul, bench/torch_compare.py race)",
              "device": timer.name}
    fields = ["tool", "device", "race_id", "study", "d_ff", "rounds", "median_us", "verdict",
              "ratio", "ratio_low", "ratio_high", "crest_verdict", "crest_ratio", "sm_clock_mhz"]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({**source, **row})
    print(f"torch_compare: raced {len(rows)} MLPs of race {rows[0]['race_id']} on {timer.name} "
          f"-> {args.out}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    args = parse(argv if argv is not None else sys.argv[1:])
    try:
        import torch  # noqa: PLC0415 (only the GPU machine has it)
    except ImportError:
        print("torch_compare: PyTorch is not installed here; run it on the GPU machine",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_compare: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    if args.study in ("db", "race") and not args.db:
        print(f"torch_compare: the {args.study} study needs --db", file=sys.stderr)
        return 2
    if args.study == "race":
        return run_race(torch, args)
    shapes = shapes_for(args)
    if not shapes:
        print("torch_compare: no GEMMs to time", file=sys.stderr)
        return 2
    timer = Timer(torch, args.settle_s)
    timer.warm_up(shapes[0], args.warmup_s)
    # Every row says what timed it and where: these are PyTorch's times, not Crest's.
    source = {"tool": f"torch {torch.__version__} (torch.matmul, bench/torch_compare.py)",
              "device": timer.name}
    fields = ["tool", "device", "name", "d_ff", "batch", "m", "n", "k", "dtype", "layout",
              "median_us", "ci_low_us", "ci_high_us", "samples", "launches_per_sample", "copies",
              "tflops", "sm_clock_mhz", "power_w"]
    # Each row is written as it is measured, so a run stopped by a time limit
    # keeps every GEMM it finished.
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for i, s in enumerate(shapes):
            w.writerow({**source, **timer.measure(s)})
            f.flush()
            if i % 50 == 0:
                print(f"torch_compare: {i + 1}/{len(shapes)}", file=sys.stderr, flush=True)
    print(f"torch_compare: {len(shapes)} GEMMs on {timer.name} (torch {torch.__version__}) -> "
          f"{args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
