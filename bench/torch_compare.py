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
    runs power-capped as in training, and each shape's graph is replayed for
    --settle-s seconds before its samples (operand set-up and graph capture
    leave the GPU idle long enough to climb back to its boost clock; Crest's
    engine likewise judges samples against the GEMM's own settled rounds);
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
The `db` study times every distinct GEMM a Crest database measured (any
layout, batch and dtype), so any Crest sweep gets its PyTorch side by side.
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
SETTLE_S = 0.3
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

    def _settle(self, graph) -> None:
        """Replays the graph until settle_s has passed: samples start under load."""
        end = time.time() + self.settle_s
        while time.time() < end:
            graph.replay()
            self.torch.cuda.synchronize()

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
            self.torch.cuda.synchronize()

    def measure(self, s: Dict) -> Dict:
        run, copies = self._gemm(s)
        for i in range(copies):
            run(i)
        one = self._elapsed_us(lambda: run(0))
        launches = launches_per_sample(one, copies)
        graph = self._graph(run, launches)
        self._settle(graph)
        samples: List[float] = []
        clocks: List[float] = []
        power: List[float] = []
        sampling = 0.0
        while not converged(samples) and (sampling < MAX_SAMPLING_S or len(samples) < MIN_SAMPLES):
            t0 = time.time()
            samples.append(self._elapsed_us(graph.replay) / launches)
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


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("study", choices=["seed-bmm", "mlp", "db"])
    p.add_argument("--db", help="the Crest database whose GEMMs the `db` study times")
    p.add_argument("--out", required=True)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--window", type=int, default=128)
    p.add_argument("--k-from", type=int, default=10820)
    p.add_argument("--k-to", type=int, default=11020)
    p.add_argument("--k-step", type=int, default=4)
    p.add_argument("--warmup-s", type=float, default=3.0)
    p.add_argument("--settle-s", type=float, default=SETTLE_S,
                   help="seconds each shape's graph is replayed before its samples")
    p.add_argument("--quick", action="store_true", help="window 16, K step 40")
    return p.parse_args(argv)


def shapes_for(args) -> List[Dict]:
    if args.study == "db":
        return db_shapes(args.db)
    if args.study == "seed-bmm":
        return seed_bmm_shapes(args.k_from, args.k_to, 40 if args.quick else args.k_step)
    return mlp_shapes(args.hidden, 16 if args.quick else args.window)


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
    if args.study == "db" and not args.db:
        print("torch_compare: the db study needs --db", file=sys.stderr)
        return 2
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
