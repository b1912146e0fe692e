#!/usr/bin/env python3
"""crest design's predicted training step against published training runs.

Usage: bench/design_vs_published.py CREST [CSV]   (CSV: bench/data/published_runs.csv)

Each row of the CSV is one published bf16 run (its model, GPUs, micro-batch, gradient
accumulation, sharding, recompute, and its tokens/s per GPU and MFU as published).
`crest design` is asked for exactly that configuration, and the bench prints per row
predicted / published tokens/s and predicted - published MFU, then the summary the
step model is judged by: the share of rows within 0.8-1.25x of published tokens/s, and
within 8 points of published MFU. Nothing is fitted per row: the model's only freedom
is its stated constants (`crest design` prints them). Predicted figures are Crest's
model's, never a GPU's.
"""
import csv
import json
import os
import statistics
import subprocess
import sys

_FLAGS = ("hidden", "heads", "kv_heads", "d_ff", "vocab", "layers", "seq", "tp", "zero", "grad_reduce",
          "backward_prefetch", "recompute", "mlp", "norm", "attention")


def design_args(row: dict) -> list:
    """The `crest design` flags of one published run."""
    args = ["design", "--json", "--gpu", row["gpu"], "--batch", row["micro_batch"],
            "--grad-accum", row["grad_accum"],
            "--dp", str(int(row["gpus"]) // int(row["tp"]))]
    for name in _FLAGS:
        args += ["--" + name.replace("_", "-"), row[name]]
    if row["rotary"] == "0":
        args.append("--no-rotary")
    if row["tied"] == "1":
        args.append("--tied-embeddings")
    return args


def predict(crest: str, row: dict) -> dict:
    """One row's prediction: tokens/s, MFU [%] and memory, or the rule it breaks."""
    done = subprocess.run([crest, *design_args(row)], capture_output=True, text=True,
                          check=False)
    doc = json.loads(done.stdout) if done.stdout.strip() else {}
    if doc.get("configs"):
        c = doc["configs"][0]
        step, tokens = c["step_train"], c["step"]["tokens_per_gpu"]
        # The step's interval as tokens/s: the slow end first.
        span = (tokens / (step["time_high_us"] * 1e-6), tokens / (step["time_low_us"] * 1e-6))
        return {"tokens": c["tokens_per_s_per_gpu"], "mfu": 100 * c["mfu_peak"],
                "mem": c["memory"]["total_gib"], "span": span, "rule": ""}
    broken = doc.get("broken_rules") or [{"rule": done.stderr.strip()}]
    return {"tokens": 0.0, "mfu": 0.0, "mem": 0.0, "span": (0.0, 0.0), "rule": broken[0]["rule"]}


def read_rows(path: str) -> list:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    crest = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data", "published_runs.csv")
    rows = read_rows(path)
    print(f"{'model':10} {'gpu':10} {'gpus':>4} {'seq':>5} {'b':>3} {'acc':>3} {'recomp':6} "
          f"{'published':>9} {'predicted':>9} {'ratio':>6} {'MFU pub':>7} {'MFU pred':>8} "
          f"{'dMFU':>6} {'mem_GiB':>7}")
    ratios, mfu_gaps, refused, covered = [], [], [], 0
    groups = {}  # (source, gpu) -> ratios, so a bias of one framework or GPU shows apart
    for row in rows:
        p = predict(crest, row)
        published = float(row["tokens_per_s_per_gpu"])
        if p["rule"]:
            refused.append(row)
            print(f"{row['model']:10} {row['gpu']:10} {row['gpus']:>4} {row['seq']:>5} "
                  f"{row['micro_batch']:>3} {row['grad_accum']:>3} {row['recompute']:6} "
                  f"{published:9.0f}  refused: {p['rule'][:100]}")
            continue
        covered += p["span"][0] <= published <= p["span"][1]
        ratio = p["tokens"] / published
        gap = p["mfu"] - float(row["mfu_pct"])
        ratios.append(ratio)
        mfu_gaps.append(gap)
        groups.setdefault((row["source"], row["gpu"]), []).append(ratio)
        print(f"{row['model']:10} {row['gpu']:10} {row['gpus']:>4} {row['seq']:>5} "
              f"{row['micro_batch']:>3} {row['grad_accum']:>3} {row['recompute']:6} "
              f"{published:9.0f} {p['tokens']:9.0f} {ratio:6.2f} {float(row['mfu_pct']):7.1f} "
              f"{p['mfu']:8.1f} {gap:+6.1f} {p['mem']:7.1f}")
    n = len(rows)
    within = sum(1 for r in ratios if 0.8 <= r <= 1.25)
    close = sum(1 for g in mfu_gaps if abs(g) <= 8)
    print()
    print(f"rows: {n} published runs ({path}), {len(refused)} refused by the model")
    if ratios:
        print(f"tokens/s predicted/published: median {statistics.median(ratios):.2f}, "
              f"range {min(ratios):.2f}-{max(ratios):.2f}; within 0.8-1.25x: {within} of {n} "
              f"({100 * within / n:.0f}%, target >= 80%)")
        print(f"MFU predicted - published: median {statistics.median(mfu_gaps):+.1f} points; "
              f"within 8 points: {close} of {n} ({100 * close / n:.0f}%)")
        for (source, gpu), group in sorted(groups.items()):
            inside = sum(1 for r in group if 0.8 <= r <= 1.25)
            print(f"  {source} on {gpu}: {len(group)} rows, ratio median "
                  f"{statistics.median(group):.2f}, range {min(group):.2f}-{max(group):.2f}, "
                  f"within 0.8-1.25x: {inside}")
        print(f"published tokens/s inside the predicted step's interval: {covered} of {n} "
              f"({100 * covered / n:.0f}%): the interval ranks configurations under the model; "
              f"it is not a coverage interval for a real run")
    print("figures: predicted by crest design's step model (its constants as it prints them), "
          "published as the source states; no GPU ran here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
