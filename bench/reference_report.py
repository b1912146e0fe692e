#!/usr/bin/env python3
"""Publish a scripts/gpu-reference.sh results folder as text: per-study CSVs with
provenance, the d_ff rankings, the heads and TP designs, Crest against PyTorch,
repeatability, sweep speed and the GPU's clock state, and README.md with the
tables (the source of docs/results.md's figures).

Every figure is measured by Crest's engine or by PyTorch (bench/torch_compare.py)
on the device the results folder names; nothing here is predicted.

Usage: reference_report.py --crest BIN --results DIR --out DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_results  # noqa: E402
import gpu_check_summary as check  # noqa: E402

# Study database, d_ff hidden size, the passes ranked, the repeat it is compared with.
DFF_STUDIES = [("dff-h4096", 4096, ("fwd", "train")), ("dff-h4096-fwd", 4096, ("fwd",)),
               ("dff-h8192-fwd", 8192, ("fwd",))]
STUDIES = ["seed-bmm", "dff-h4096", "dff-h4096-fwd", "dff-h8192-fwd", "heads-tp"]
HEADS = ["--hidden", "4096", "--heads", "16,32,64", "--kv-heads", "8", "--d-ff", "11008"]
TP = ["--hidden", "4096", "--heads", "32", "--kv-heads", "8", "--d-ff", "10922,11008,14336",
      "--tp", "1,2,4,8"]
# Crest's row clock that says the GEMM ran power-capped, or at (near) boost.
POWER_CAPPED_MHZ = 1700
BOOST_MHZ = 1900
MODEL = ["--vocab", "32000", "--seq", "4096", "--batch", "2", "--layers", "32", "--gpu", "h100"]


def crest(binary: str, *args: str) -> str:
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def dff_answer(binary: str, db: str, hidden: int, pass_: str) -> Dict:
    return json.loads(crest(binary, "dff", "--db", db, "--hidden", str(hidden), "--gpu", "h100",
                            "--pass", pass_, "--top", "0", "--json"))


def dff_row(name: str, pass_: str, d: Dict) -> Dict:
    best, base = d["candidates"][0], d["baseline"]
    return {"study": name, "pass": pass_, "baseline": base["d_ff"],
            "baseline_us": base["time_us"], "baseline_tflops": base["tflops"],
            "best": best["d_ff"], "best_us": best["time_us"], "best_tflops": best["tflops"],
            "speedup": base["time_us"] / best["time_us"], "ties": check.tie_group(d)}


def by_residue(d: Dict, modulus: int = 8) -> Dict[int, float]:
    """Median TFLOP/s of the candidates by d_ff mod `modulus`: the alignment steps."""
    groups: Dict[int, List[float]] = {}
    for r in d["candidates"]:
        groups.setdefault(r["d_ff"] % modulus, []).append(r["tflops"])
    return {k: statistics.median(v) for k, v in sorted(groups.items())}


def torch_rows(results: str, study: str) -> List[Dict]:
    return check.load_csv(os.path.join(results, f"{study}.torch.csv"))


def versus_torch(results: str, study: str) -> Optional[Dict]:
    """Per shape torch/Crest; 'slower' counts shapes whose intervals do not overlap."""
    db = os.path.join(results, f"{study}.db")
    rows = torch_rows(results, study)
    if not rows or not os.path.exists(db):
        return None
    crest_times = check.best_times(db)
    pairs = check.against_torch(crest_times, rows)
    if not pairs:
        return None
    by_key = {check.torch_key(r): r for r in rows}
    clearly_slower = 0
    for key, c in crest_times.items():
        t = by_key.get(key)
        if t is not None and c["ci_low_us"] > float(t["ci_high_us"]):
            clearly_slower += 1
    ratios = [p["ratio"] for p in pairs]
    capped = [p["ratio"] for p in pairs if 0 < p["crest_clock_mhz"] < POWER_CAPPED_MHZ]
    boost = [p["ratio"] for p in pairs if p["crest_clock_mhz"] >= BOOST_MHZ]
    at_clock = [p["ratio_at_equal_clock"] for p in pairs if p["ratio_at_equal_clock"]]
    return {"study": study, "shapes": len(ratios), "min": min(ratios),
            "at_equal_clock": statistics.median(at_clock) if at_clock else None,
            "crest_clock": statistics.median(p["crest_clock_mhz"] for p in pairs),
            "capped": (len(capped), statistics.median(capped) if capped else None),
            "boost": (len(boost), statistics.median(boost) if boost else None),
            "median": statistics.median(ratios), "max": max(ratios),
            "slower": sum(1 for r in ratios if r < 1), "clearly_slower": clearly_slower,
            "most": sorted(pairs, key=lambda p: -p["ratio"])[:3],
            "least": sorted(pairs, key=lambda p: p["ratio"])[:3]}


SEARCH_GAIN = f"""
WITH {check.ANSWERS}
SELECT b.median_us AS best_us, b.ci_high_us AS best_high, f.median_us AS first_us,
       f.ci_low_us AS first_low, b.measurement_id = f.id AS first_is_best,
       b.m, b.n, b.k, b.batch, b.trans_a, b.trans_b
FROM answers AS b JOIN measurements AS f ON f.id = (
  SELECT min(id) FROM measurements AS x
  WHERE x.m = b.m AND x.n = b.n AND x.k = b.k AND x.batch = b.batch AND x.trans_a = b.trans_a
    AND x.trans_b = b.trans_b AND x.dtype = b.dtype AND x.cache_mode = b.cache_mode
    AND x.clock_policy = b.clock_policy AND x.software_id = b.software_id
    AND coalesce(x.job_id, 0) = b.job_id AND x.device_id = b.device_id)
WHERE b.cache_mode = 'cold' AND b.clock_policy = 'sustained'
"""


def search_gain(results: str, study: str) -> Optional[Dict]:
    """Crest's chosen algorithm against cuBLASLt's own first choice (the heuristic's
    first candidate; the engine stores a GEMM's algorithms in the heuristic's order),
    both raced in the same interleaved rounds, so in the same clock state."""
    db = os.path.join(results, f"{study}.db")
    if not os.path.exists(db):
        return None
    with check.read_only(db) as con:
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute(SEARCH_GAIN)]
    if not rows:
        return None
    gains = [r["first_us"] / r["best_us"] for r in rows]
    top = max(rows, key=lambda r: r["first_us"] / r["best_us"])
    layout = ("T" if top["trans_a"] else "N") + ("T" if top["trans_b"] else "N")
    return {"study": study, "gemms": len(rows), "first_is_best": sum(r["first_is_best"] for r in rows),
            "median": statistics.median(gains), "max": max(gains),
            "over_2pct": sum(1 for g in gains if g > 1.02),
            "apart": sum(1 for r in rows if r["first_low"] > r["best_high"]),
            "max_shape": f'm={top["m"]} n={top["n"]} k={top["k"]} b={top["batch"]} {layout}'}


def fwd_keys_repeat(results: str) -> Dict:
    """The two h=4096 forward sweeps: differences, and whether each GEMM's 95% interval
    of one run overlaps the other's (within-run intervals against between-run drift)."""
    first = check.best_times(os.path.join(results, "dff-h4096.db"))
    second = check.best_times(os.path.join(results, "dff-h4096-fwd.db"))
    shared = {k: v for k, v in first.items() if k in second}
    out = check.repeatability(shared, second)
    apart = [k for k, v in shared.items()
             if v["ci_low_us"] > second[k]["ci_high_us"] or second[k]["ci_low_us"] > v["ci_high_us"]]
    big = [k for k, v in shared.items()
           if abs(second[k]["median_us"] - v["median_us"]) > 0.03 * v["median_us"]]
    out["intervals_apart"] = len(apart)
    out["over_3pct"] = len(big)
    if big:
        out["over_3pct_clock_runs"] = [statistics.median(first[k]["sm_clock_mhz"] for k in big),
                                       statistics.median(second[k]["sm_clock_mhz"] for k in big)]
    return out


def sweep_speed(results: str, study: str) -> Optional[Dict]:
    s = check.load_json(os.path.join(results, f"{study}.sweep.json"))
    if s is None:
        return None
    return {"study": study, "gemms": s["new_results"] + s["failed"], "wall_s": s["elapsed_s"],
            "per_min": s["gemms_per_minute"], "busy": s["gpu_busy_fraction"],
            "host_ms": 1e3 * s["host_overhead_per_gemm_s"], "resumed": s["resumed"]}


def clock_state(results: str) -> Dict:
    """SM clock and power while the GPU was busy (nvidia-smi every 0.5 s)."""
    busy = []
    for r in check.load_csv(os.path.join(results, "smi-trace.csv")):
        r = {k.strip(): (v or "").strip() for k, v in r.items() if k}
        util = r.get("utilization.gpu [%]", "")
        if util.isdigit() and int(util) >= 50:  # each run's trace starts with a header line
            busy.append(r)
    if not busy:
        return {}
    clocks = [float(r["clocks.current.sm [MHz]"]) for r in busy]
    power = [float(r["power.draw [W]"]) for r in busy]
    capped = sum(1 for r in busy if int(r["clocks_event_reasons.active"], 16) & 0x4)
    return {"samples": len(busy), "clock_median": statistics.median(clocks),
            "clock_p10": sorted(clocks)[len(clocks) // 10],
            "clock_p90": sorted(clocks)[9 * len(clocks) // 10],
            "power_median": statistics.median(power), "power_capped": capped / len(busy)}


def driver(results: str) -> str:
    for name in sorted(os.listdir(results)):
        if name.startswith("nvidia-smi-q"):
            with open(os.path.join(results, name)) as f:
                m = re.search(r"Driver Version\s*:\s*(\S+)", f.read())
            if m:
                return m.group(1)
    return "unknown"


def copy_raw(results: str, out: str) -> None:
    """The studies as text: each database's answers with provenance, PyTorch's CSVs, the
    sweeps' own summaries, the GPU tests' log and the clock trace."""
    for study in STUDIES:
        db = os.path.join(results, f"{study}.db")
        if os.path.exists(db):
            export_results.main([db, "--out", os.path.join(out, f"{study}.csv")])
        for suffix in (".torch.csv", ".sweep.json"):
            src = os.path.join(results, study + suffix)
            if os.path.exists(src):
                shutil.copy(src, os.path.join(out, study + suffix))
    for name in ("gpu-tests.log", "smi-trace.csv", "info.json"):
        if os.path.exists(os.path.join(results, name)):
            shutil.copy(os.path.join(results, name), os.path.join(out, name))


def fmt_ratio(r: Dict) -> str:
    eq = "not recorded" if r["at_equal_clock"] is None else f'{r["at_equal_clock"]:.3f}'
    return (f'| {r["study"]} | {r["shapes"]} | {r["min"]:.3f} | {r["median"]:.3f} | '
            f'{r["max"]:.3f} | {r["slower"]} | {r["clearly_slower"]} | '
            f'{r["crest_clock"]:.0f} | {eq} |')


def markdown(s: Dict) -> List[str]:
    dev = s["device"]
    lines = ["# Reference results: " + dev.get("name", "?"), "",
             f'Measured by Crest\'s cuBLASLt engine (cold L2, sustained clocks, the default method) '
             f'and by PyTorch {s.get("torch_version", "")} under the same protocol '
             f'(`bench/torch_compare.py`). Device {dev.get("name")} {dev.get("uuid")}, '
             f'{dev.get("sm_count")} SMs; driver {s["driver"]}, CUDA runtime '
             f'{dev.get("software", {}).get("cuda_runtime")}, cuBLASLt '
             f'{dev.get("software", {}).get("cublaslt")}. Nothing here is predicted.', ""]
    c = s["clocks"]
    if c:
        lines += [f'GPU state while busy ({c["samples"]} nvidia-smi samples, 0.5 s apart): SM clock '
                  f'median {c["clock_median"]:.0f} MHz (p10 {c["clock_p10"]:.0f}, p90 '
                  f'{c["clock_p90"]:.0f}), power median {c["power_median"]:.0f} W, power cap '
                  f'active in {100 * c["power_capped"]:.0f}% of samples.', ""]
    lines += ["## d_ff", "", "| study | pass | baseline | baseline us | TFLOP/s | best | best us | "
              "TFLOP/s | speed-up | tied with the best |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in s["dff"]:
        lines.append(f'| {r["study"]} | {r["pass"]} | {r["baseline"]} | {r["baseline_us"]:.1f} | '
                     f'{r["baseline_tflops"]:.1f} | {r["best"]} | {r["best_us"]:.1f} | '
                     f'{r["best_tflops"]:.1f} | {r["speedup"]:.3f}x | {len(r["ties"])} |')
    lines += ["", "Median TFLOP/s of the candidates by d_ff mod 8 (forward):", "",
              "| study | " + " | ".join(f"mod 8 = {k}" for k in range(8)) + " |",
              "|---|" + "---|" * 8]
    for name, res in s["residues"].items():
        lines.append(f"| {name} | " + " | ".join(f"{res.get(k, 0):.0f}" for k in range(8)) + " |")
    r = s["repeat"]
    lines += ["", "## Repeatability (h=4096 forward GEMMs, two sweeps)", "",
              f'{r["gemms"]} GEMMs: median difference {check.pct(r["median_diff"])}, worst '
              f'{check.pct(r["worst_diff"])}. Tie group with the best: run 1 '
              f'{s["ties"][0]}, run 2 {s["ties"][1]}; each run\'s best in the other\'s group: '
              f'{s["ties_held"]}.', "",
              f'{r["intervals_apart"]} of {r["gemms"]} GEMMs have 95% intervals that do not overlap '
              f'between the runs; {r["over_3pct"]} differ by more than 3%, and those ran at a median '
              f'SM clock of {r.get("over_3pct_clock_runs", [0, 0])[0]:.0f} MHz in run 1 and '
              f'{r.get("over_3pct_clock_runs", [0, 0])[1]:.0f} MHz in run 2.', "",
              "## Crest against PyTorch (ratio = PyTorch time / Crest time; > 1: Crest faster)", "",
              "| study | shapes | min | median | max | Crest slower | slower beyond both "
              "intervals | Crest's SM clock (median MHz) | median ratio at equal clock |",
              "|---|---|---|---|---|---|---|---|---|"]
    lines += [fmt_ratio(v) for v in s["torch"]]
    lines += ["", f"The same ratios split by the SM clock of Crest's measurement (power-capped: "
              f"< {POWER_CAPPED_MHZ} MHz; boost: >= {BOOST_MHZ} MHz):", "",
              "| study | power-capped shapes | median ratio | boost shapes | median ratio |",
              "|---|---|---|---|---|"]
    for v in s["torch"]:
        (nc, mc), (nb, mb) = v["capped"], v["boost"]
        lines.append(f'| {v["study"]} | {nc} | {"-" if mc is None else f"{mc:.3f}"} | {nb} | '
                     f'{"-" if mb is None else f"{mb:.3f}"} |')
    lines += ["", "## Crest's search against cuBLASLt's first choice, in the same race", "",
              "Gain = the heuristic's first algorithm's time / Crest's chosen one's, both raced "
              "in the same rounds (same clock state).", "",
              "| study | GEMMs | first choice is best | median gain | max gain (shape) | "
              "gain > 2% | intervals apart |", "|---|---|---|---|---|---|---|"]
    for g in s["search"]:
        lines.append(f'| {g["study"]} | {g["gemms"]} | {g["first_is_best"]} | {g["median"]:.4f} | '
                     f'{g["max"]:.3f} ({g["max_shape"]}) | {g["over_2pct"]} | {g["apart"]} |')
    lines += ["", "Where Crest gains most, and least, against PyTorch:", "", "| study | shape | Crest us | PyTorch us "
              "| ratio |", "|---|---|---|---|---|"]
    for v in s["torch"]:
        for p in v["most"] + v["least"]:
            lines.append(f'| {v["study"]} | {p["shape"]} | {p["crest_us"]:.1f} | '
                         f'{p["torch_us"]:.1f} | {p["ratio"]:.3f} |')
    lines += ["", "## Sweep speed", "", "| study | GEMMs | wall s | GEMMs/min | GPU busy | host ms/GEMM |",
              "|---|---|---|---|---|---|"]
    for v in s["speed"]:
        note = " (resumed part)" if v["resumed"] else ""
        lines.append(f'| {v["study"]}{note} | {v["gemms"]} | {v["wall_s"]:.0f} | '
                     f'{v["per_min"]:.1f} | {100 * v["busy"]:.1f}% | {v["host_ms"]:.1f} |')
    lines += ["", "## Heads and tensor parallelism (h=4096, kv-heads 8, vocab 32000, seq 4096, "
              "batch 2, 32 layers; `crest design` over the measured GEMMs)", "",
              "| heads | head dim | d_ff | tp | params B | layer fwd us | train us/layer | "
              "attention core fwd us | tokens/s/GPU | source |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in s["design"]:
        lines.append(f'| {r["a"]} | {r["d"]} | {r["f"]} | {r["t"]} | {r["params_B"]} | '
                     f'{r["layer_fwd_us"]} | {r["train_us/layer"]} | {r["attn_core_fwd_us"]} | '
                     f'{float(r["tokens/s/GPU"]):,.0f} | {r["source"]} |')
    lines += ["", "Only GEMMs are timed (attention's core as its two batched GEMMs, not a fused "
              "kernel); tokens/s are upper bounds. heads.csv and tp.csv hold every column.", ""]
    return lines


def summarize(binary: str, results: str, out: str) -> Dict:
    info = check.load_json(os.path.join(results, "info.json")) or {}
    s: Dict = {"device": (info.get("devices") or [{}])[0], "driver": driver(results),
               "clocks": clock_state(results), "dff": [], "residues": {}}
    answers = {}
    for name, hidden, passes in DFF_STUDIES:
        db = os.path.join(results, f"{name}.db")
        for p in passes:
            d = dff_answer(binary, db, hidden, p)
            answers[(name, p)] = d
            s["dff"].append(dff_row(name, p, d))
            with open(os.path.join(out, f"{name}.dff-{p}.csv"), "w") as f:
                f.write(crest(binary, "--csv", "dff", "--db", db, "--hidden", str(hidden),
                              "--gpu", "h100", "--pass", p, "--top", "0"))
            if p == "fwd":
                s["residues"][name] = by_residue(d)
    s["repeat"] = fwd_keys_repeat(results)
    first, second = answers[("dff-h4096", "fwd")], answers[("dff-h4096-fwd", "fwd")]
    s["ties"] = [check.tie_group(first), check.tie_group(second)]
    s["ties_held"] = (first["candidates"][0]["d_ff"] in s["ties"][1] and
                      second["candidates"][0]["d_ff"] in s["ties"][0])
    s["torch"] = [v for v in (versus_torch(results, st) for st in STUDIES) if v]
    s["search"] = [v for v in (search_gain(results, st) for st in STUDIES) if v]
    s["speed"] = [v for v in (sweep_speed(results, st) for st in STUDIES) if v]
    db = os.path.join(results, "heads-tp.db")
    s["design"] = []
    for name, dims in (("heads", HEADS), ("tp", TP)):
        text = crest(binary, "--csv", "design", "--db", db, *dims, *MODEL, "--top", "0")
        with open(os.path.join(out, f"{name}.csv"), "w") as f:
            f.write(text)
        s["design"] += list(csv.DictReader(text.splitlines()))
    return s


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crest", required=True, help="the crest binary")
    p.add_argument("--results", required=True, help="a scripts/gpu-reference.sh results folder")
    p.add_argument("--out", required=True, help="folder to write (bench/results/<gpu-model>)")
    p.add_argument("--torch-version", default="", help="PyTorch version the CSVs were made with")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    copy_raw(args.results, args.out)
    try:
        s = summarize(args.crest, args.results, args.out)
    except subprocess.CalledProcessError as e:
        print(f"reference_report: {' '.join(e.cmd)}: {e.stderr}", file=sys.stderr)
        return 1
    s["torch_version"] = args.torch_version
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(s, f, indent=2, default=str)
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write("\n".join(markdown(s)) + "\n")
    print(f"reference_report: {args.out}/README.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
