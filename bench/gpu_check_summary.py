#!/usr/bin/env python3
"""The summary of one scripts/gpu-check.sh results folder: summary.md and summary.json.

Reads what the check wrote (crest info/sweep/dff JSON, the sweeps' databases,
torch_compare.py CSVs, the GPU tests' log) and reports, against the targets
of the engine issue: sweep speed (GEMMs/min, GPU-busy fraction, host overhead
per GEMM, host ms per stage), repeatability of two back-to-back sweeps
(per-GEMM best medians, whether the best d_ff's tie group held, and the two
runs' races of their leaders: each run's leader inside the other's leading
group, their paired ratios' agreement), the d_ff answer, Crest against
PyTorch per shape, and algorithm rows left without samples.

Every figure here is measured by Crest's engine or by PyTorch on the device
named at the top; nothing is predicted.

Usage: gpu_check_summary.py RESULTS_DIR [--clocks sustained|burst]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import sqlite3
import statistics
import sys
from typing import Dict, Iterator, List, Optional, Tuple

Key = Tuple[int, int, int, int, str, int, int]  # m, n, k, batch, dtype, trans_a, trans_b


@contextlib.contextmanager
def read_only(db_path: str) -> Iterator[sqlite3.Connection]:
    """A Crest database opened read-only (never created, never written), closed after."""
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        yield con
    finally:
        con.close()


# Each GEMM's answer in a Crest database, as a table `answers` for a WITH
# clause: its newest run's fastest verified algorithm (the rule `crest compare`
# reads by: store.h's NewestRunBests), with `runs`, how
# many runs measured the GEMM in that mode. A database of one sweep has one run.
ANSWERS = """answers AS (
  SELECT * FROM (
    SELECT rb.*,
           row_number() OVER gemm_runs AS newest,
           count(*) OVER (PARTITION BY rb.gpu_model, rb.cache_mode, rb.clock_policy, rb.dtype,
                                       rb.trans_a, rb.trans_b, rb.batch, rb.m, rb.n, rb.k) AS runs
    FROM run_bests AS rb JOIN measurements AS m ON m.id = rb.measurement_id
    LEFT JOIN jobs AS j ON rb.job_id <> 0 AND j.id = rb.job_id
    WINDOW gemm_runs AS (
      PARTITION BY rb.gpu_model, rb.cache_mode, rb.clock_policy, rb.dtype, rb.trans_a,
                   rb.trans_b, rb.batch, rb.m, rb.n, rb.k
      ORDER BY coalesce(j.created_us, m.created_us) DESC, rb.job_id DESC, rb.device_id DESC,
               rb.software_id DESC, rb.median_us))
  WHERE newest = 1)"""


def best_times(db_path: str, cache: str = "cold", clocks: str = "sustained") -> Dict[Key, Dict]:
    """Each GEMM's answer in a Crest database (ANSWERS): median and interval [µs]."""
    with read_only(db_path) as con:
        rows = con.execute(
            f"WITH {ANSWERS} "
            "SELECT b.m, b.n, b.k, b.batch, b.dtype, b.trans_a, b.trans_b, b.median_us, "
            "b.ci_low_us, b.ci_high_us, m.sm_clock_mhz FROM answers AS b "
            "JOIN measurements AS m ON m.id = b.measurement_id "
            "WHERE b.cache_mode = ? AND b.clock_policy = ?",
            (cache, clocks)).fetchall()
    return {tuple(r[:7]): {"median_us": r[7], "ci_low_us": r[8], "ci_high_us": r[9],
                           "sm_clock_mhz": r[10]}
            for r in rows}


def rows_without_samples(db_path: str) -> int:
    with read_only(db_path) as con:
        return con.execute("SELECT count(*) FROM measurements WHERE samples = 0").fetchone()[0]


def repeatability(first: Dict[Key, Dict], second: Dict[Key, Dict]) -> Dict:
    """Relative differences of the per-GEMM best medians of two runs."""
    diffs = [abs(second[k]["median_us"] - v["median_us"]) / v["median_us"]
             for k, v in first.items() if k in second and v["median_us"] > 0]
    if not diffs:
        return {"gemms": 0, "median_diff": None, "worst_diff": None}
    return {"gemms": len(diffs), "median_diff": statistics.median(diffs),
            "worst_diff": max(diffs)}


def tie_group(dff: Dict) -> List[int]:
    """The d_ff candidates tied with the best in a `crest dff --json` answer."""
    return sorted(r["d_ff"] for r in dff.get("candidates", []) if r.get("tie_group") == 1)


def race_groups(sweep: Dict) -> List[Dict]:
    """Each d_ff study's race in a `crest sweep --json` summary: its leading tie group
    (the leader and every candidate it could not be told from) and each candidate's
    paired ratio to the leader."""
    out = []
    for race in sweep.get("races", []) or []:
        standings = race.get("standings") or []
        out.append({"study": race.get("study"), "algo": race.get("algo", "best"),
                    "raced": race.get("race_id") is not None,
                    "why_not": race.get("why_not"), "rounds": race.get("rounds"),
                    "seconds": race.get("seconds"), "stop_reason": race.get("stop_reason"),
                    "leader": next((s["d_ff"] for s in standings if s["verdict"] == "leader"),
                                   None),
                    "group": sorted(s["d_ff"] for s in standings if s["tie_group"] == 1),
                    "ratios": {s["d_ff"]: s["ratio"] for s in standings}})
    return out


def races_agree(first: Dict, second: Dict) -> Dict:
    """Two runs' races of one study: is each run's leader in the other's leading group,
    and how far apart are the candidates' ratios (both taken to run 1's leader)?"""
    common = sorted(set(first["ratios"]) & set(second["ratios"]))
    lead = first["leader"]
    diffs = []
    if lead in second["ratios"] and second["ratios"][lead] > 0:
        diffs = [abs(first["ratios"][c] - second["ratios"][c] / second["ratios"][lead])
                 for c in common]
    return {"leader_1_in_group_2": first["leader"] in second["group"],
            "leader_2_in_group_1": second["leader"] in first["group"],
            "common": len(common), "worst_ratio_diff": max(diffs) if diffs else None}


def torch_key(row: Dict) -> Key:
    ta, tb = {"NT": (0, 1), "NN": (0, 0), "TN": (1, 0), "TT": (1, 1)}[row["layout"]]
    return (int(row["m"]), int(row["n"]), int(row["k"]), int(row["batch"]), row["dtype"], ta, tb)


def against_torch(crest: Dict[Key, Dict], torch_rows: List[Dict]) -> List[Dict]:
    """Per shape: PyTorch's median / Crest's best (> 1: Crest's algorithm is faster)."""
    out = []
    for row in torch_rows:
        key = torch_key(row)
        if key not in crest:
            continue
        c = crest[key]["median_us"]
        t = float(row["median_us"])
        # At equal clock: the two times in SM cycles, where both runs read the clock
        # (PyTorch CSVs made before torch_compare.py read NVML have no clock column).
        c_clock = crest[key].get("sm_clock_mhz") or 0
        t_clock = float(row.get("sm_clock_mhz") or 0)
        out.append({"shape": f'{row["name"]} m={key[0]} n={key[1]} k={key[2]} b={key[3]}',
                    "crest_us": c, "torch_us": t, "ratio": t / c if c > 0 else None,
                    "crest_clock_mhz": c_clock, "torch_clock_mhz": t_clock,
                    "ratio_at_equal_clock": (t * t_clock) / (c * c_clock)
                    if c > 0 and c_clock > 0 and t_clock > 0 else None})
    return out


def load_json(path: str) -> Optional[Dict]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_csv(path: str) -> List[Dict]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def sweep_lines(results: str) -> List[str]:
    lines = ["| study | GEMMs run | wall s | GEMMs/min | GPU busy | host ms/GEMM |",
             "|---|---|---|---|---|---|"]
    for name in ("seed-bmm", "mlp-fwd-1", "mlp-fwd-2"):
        s = load_json(os.path.join(results, f"{name}.sweep.json"))
        if s is None:
            lines.append(f"| {name} | not run | | | | |")
            continue
        lines.append(f'| {name} | {s["new_results"] + s["failed"]} | {s["elapsed_s"]:.1f} | '
                     f'{s["gemms_per_minute"]:.1f} | {pct(s["gpu_busy_fraction"])} | '
                     f'{1e3 * s["host_overhead_per_gemm_s"]:.1f} |')
    return lines


STEADY_TESTS = ("SustainedMedianIsWithinThreePercentOfABackToBackLoop",
                "HostWorkBetweenGemmsRunsBesideQueuedLoad")


def steady_load_lines(results: str) -> List[str]:
    """The GPU tests' steady-load checks (cublaslt_test's printed figures and
    verdicts, from gpu-tests.log): the sustained median against a back-to-back
    loop, and GEMMs measured after host pauses."""
    try:
        with open(os.path.join(results, "gpu-tests.log")) as f:
            log = f.read().splitlines()
    except OSError:
        return []
    figures = [ln.strip() for ln in log
               if ln.startswith("sustained median") or ln.startswith("after a 100 ms pause")]
    verdicts = []
    for test in STEADY_TESTS:
        if any(f"[       OK ] CublasLt.{test}" in ln for ln in log):
            verdicts.append(f"{test}: passed")
        elif any(f"[  FAILED  ] CublasLt.{test}" in ln for ln in log):
            verdicts.append(f"{test}: FAILED")
        elif any(f"[  SKIPPED ] CublasLt.{test}" in ln for ln in log):
            verdicts.append(f"{test}: skipped")
    return [f"- {x}" for x in verdicts + figures]


def summarize(results: str, clocks: str = "sustained") -> Dict:
    out: Dict = {"results": results, "clocks": clocks}
    info = load_json(os.path.join(results, "info.json")) or {}
    out["devices"] = info.get("devices", [])
    dbs = {n: os.path.join(results, f"{n}.db") for n in ("seed-bmm", "mlp-fwd-1", "mlp-fwd-2")}
    times = {n: best_times(p, clocks=clocks) for n, p in dbs.items() if os.path.exists(p)}
    out["rows_without_samples"] = {n: rows_without_samples(p) for n, p in dbs.items()
                                   if os.path.exists(p)}
    if "mlp-fwd-1" in times and "mlp-fwd-2" in times:
        out["repeatability"] = repeatability(times["mlp-fwd-1"], times["mlp-fwd-2"])
    dff = [load_json(os.path.join(results, f"mlp-fwd-{i}.dff.json")) for i in (1, 2)]
    if all(dff):
        out["tie_groups"] = [tie_group(d) for d in dff]
        out["tie_group_held"] = out["tie_groups"][0] == out["tie_groups"][1]
        best, base = dff[0]["candidates"][0], dff[0]["baseline"]
        out["dff"] = {"best": best["d_ff"], "best_us": best["time_us"],
                      "best_tflops": best["tflops"], "baseline": base["d_ff"],
                      "baseline_us": base["time_us"],
                      "speedup": (base["time_us"] / best["time_us"]) if base["time_us"] else None}
    sweeps = [load_json(os.path.join(results, f"mlp-fwd-{i}.sweep.json")) for i in (1, 2)]
    races = [race_groups(x) if x else [] for x in sweeps]
    out["races"] = races
    # The runs' races of the fastest algorithms' answer are compared.
    fastest = [[g for g in r if g["algo"] == "best"] for r in races]
    if all(r and r[0]["raced"] for r in fastest):
        out["races_agree"] = races_agree(fastest[0][0], fastest[1][0])
    torch_race = load_csv(os.path.join(results, "torch-race.csv"))
    if torch_race:
        out["torch_race"] = [{"d_ff": int(r["d_ff"]), "verdict": r["verdict"],
                              "ratio": float(r["ratio"]), "crest_verdict": r["crest_verdict"],
                              "crest_ratio": float(r["crest_ratio"])} for r in torch_race]
    out["host_per_gemm"] = {n: (load_json(os.path.join(results, f"{n}.sweep.json")) or {})
                            .get("host_per_gemm") for n in ("seed-bmm", "mlp-fwd-1", "mlp-fwd-2")}
    comparisons = []
    for study, name in (("seed-bmm", "torch-seed-bmm.csv"), ("mlp-fwd-1", "torch-mlp.csv")):
        if study in times:
            comparisons += against_torch(times[study], load_csv(os.path.join(results, name)))
    ratios = [c["ratio"] for c in comparisons if c["ratio"]]
    out["torch"] = {"shapes": len(ratios),
                    "min": min(ratios) if ratios else None,
                    "median": statistics.median(ratios) if ratios else None,
                    "max": max(ratios) if ratios else None,
                    "crest_slower": sum(1 for r in ratios if r < 1.0),
                    "gains_most": sorted(comparisons, key=lambda c: -(c["ratio"] or 0))[:5]}
    return out


def markdown(s: Dict, results: str) -> str:
    lines = ["# GPU check", ""]
    for d in s["devices"]:
        sw = d.get("software", {})
        lines.append(f'Device: {d.get("name")} {d.get("uuid")} ({d.get("gpu_model")}); driver '
                     f'{sw.get("driver")}, CUDA runtime {sw.get("cuda_runtime")}, cuBLASLt '
                     f'{sw.get("cublaslt")}. Measured, {s["clocks"]} clocks, cold L2.')
    lines += ["", "## Sweep speed (targets: host <= 20 ms/GEMM, GPU busy >= 80%, h=4096 fwd "
              "<= 3 min)", ""] + sweep_lines(results)
    r = s.get("repeatability")
    if r:
        lines += ["", "## Repeatability, two back-to-back h=4096 forward sweeps (targets: median "
                  "<= 1%, worst <= 3%, the best d_ff's tie group the same)", "",
                  f'{r["gemms"]} GEMMs: median difference {pct(r["median_diff"])}, worst '
                  f'{pct(r["worst_diff"])}; tie group run 1 {s.get("tie_groups", [[]])[0]}, '
                  f'run 2 {s.get("tie_groups", [[], []])[1]}: '
                  f'{"held" if s.get("tie_group_held") else "did not hold"}.']
    steady = steady_load_lines(results)
    if steady:
        lines += ["", "## Steady load (GPU tests; target: the sustained median within 3% of a "
                  "20 s back-to-back loop)", ""] + steady
    race_lines = []
    for i, races in enumerate(s.get("races", []), start=1):
        for r in races:
            race_lines.append(
                f'run {i}, {r["study"]}' +
                (" (cuBLASLt's first choices)" if r.get("algo") == "default" else "") + ": " +
                (f'leader {r["leader"]}, leading tie group {r["group"]}, {r["rounds"]} rounds, '
                 f'{r["seconds"]:.1f} s, stopped: {r["stop_reason"]}' if r["raced"]
                 else f'not raced: {r["why_not"]}'))
    a = s.get("races_agree")
    if a:
        race_lines.append(
            f'run 1\'s leader in run 2\'s group: {a["leader_1_in_group_2"]}; run 2\'s leader in '
            f'run 1\'s group: {a["leader_2_in_group_1"]}; {a["common"]} candidates raced in both, '
            f'paired ratios (to run 1\'s leader) differ by at most '
            f'{pct(a["worst_ratio_diff"])}.')
    tr = s.get("torch_race")
    if tr:
        race_lines.append(
            "PyTorch's race of run 1's candidates (same protocol; ratio to its own leader): " +
            "; ".join(f'{r["d_ff"]} {r["verdict"]} {r["ratio"]:.4f} (Crest: {r["crest_verdict"]} '
                      f'{r["crest_ratio"]:.4f})' for r in tr))
    if race_lines:
        lines += ["", "## The races of the two h=4096 forward sweeps' leaders", ""] + race_lines
    host = {k: v for k, v in s.get("host_per_gemm", {}).items() if v}
    if host:
        lines += ["", "## Host ms per GEMM by stage (and device ms keeping the load while the "
                  "host works, and reloading after idle gaps)", "",
                  "| study | operands | plan | graphs | verification | GPU readings | other engine | "
                  "write | between | keep-load | reload |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for name, h in host.items():
            lines.append(f'| {name} | ' + " | ".join(
                f'{1e3 * h.get(k, 0):.1f}' for k in ("operands_s", "plan_s", "graphs_s",
                                                     "verify_s", "readings_s",
                                                     "other_engine_s", "write_s",
                                                     "between_s", "keep_load_s", "reload_s"))
                + " |")
    d = s.get("dff")
    if d:
        lines += ["", "## The d_ff answer (h=4096, SwiGLU MLP forward, bf16, 8192 tokens)", "",
                  f'best {d["best"]}: {d["best_us"]:.1f} us ({d["best_tflops"]:.1f} TFLOP/s); '
                  f'baseline {d["baseline"]}: {d["baseline_us"]:.1f} us; speed-up '
                  f'{d["speedup"]:.3f}x.']
    t = s["torch"]
    lines += ["", "## Crest's chosen algorithm against PyTorch (ratio = torch / Crest; > 1: Crest "
              "faster)", ""]
    if t["shapes"]:
        lines.append(f'{t["shapes"]} shapes: ratio min {t["min"]:.3f}, median {t["median"]:.3f}, '
                     f'max {t["max"]:.3f}; Crest slower on {t["crest_slower"]}.')
        lines += ["", "| shape | Crest us | torch us | ratio |", "|---|---|---|---|"]
        lines += [f'| {c["shape"]} | {c["crest_us"]:.1f} | {c["torch_us"]:.1f} | '
                  f'{c["ratio"]:.3f} |' for c in t["gains_most"]]
    else:
        lines.append("no PyTorch comparison in this folder")
    lines += ["", "Algorithm rows without samples: " +
              ", ".join(f"{k} {v}" for k, v in s["rows_without_samples"].items()), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("--clocks", default="sustained", choices=["sustained", "burst"])
    args = p.parse_args(argv)
    s = summarize(args.results, args.clocks)
    with open(os.path.join(args.results, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
    text = markdown(s, args.results)
    with open(os.path.join(args.results, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
