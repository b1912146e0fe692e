#!/usr/bin/env bash
# Held-out check of the predictor's calibration on real H100 timings: for each
# SwiGLU d_ff window Crest measured (h=4096 and h=8192, 257 candidates each),
# fit bf16 from every other GEMM Crest measured (the window's own GEMMs left
# out, wherever they appear), then judge that fit on the left-out window
# against each independent timing of it: Crest's runs and the PyTorch runs.
# Prints the window's Spearman rank correlation (predicted vs timed MLP time,
# all candidates), the median error and the predicted best's gap, per source,
# for the fit and, side by side, for the same fit without its K-residue
# factors (the model before they were added).
#
# The fit reads Crest's exported CSVs (bench/results/h100/*.csv) through
# `crest db import`, so its rows are stored as imported; they are Crest's
# engine measurements of 2026-11-23 (cold L2, sustained clocks), as
# bench/results/h100/README.md says. Nothing here runs on a GPU.
# Usage: bench/predictor_holdout.sh [BUILD_DIR] [--json OUT]   (CREST_BIN overrides the crest binary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
json_out=
while (($#)); do
  case $1 in
    --json) json_out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
crest=${CREST_BIN:-$build/clients/crest/crest}
py=/usr/bin/python3
results=$root/bench/results/h100
data=$root/tests/data/h100-2026-11-22
device="NVIDIA H100 80GB HBM3"
work=$(mktemp -d)
[[ -n ${CREST_KEEP_WORK:-} ]] || trap 'rm -rf "$work"' EXIT

# Crest's measured studies (bf16); the window files of each hidden size.
fit_files=("$results/dff-h4096.csv" "$results/dff-h4096-fwd.csv" "$results/dff-h8192-fwd.csv"
           "$results/heads-tp.csv")
declare -A window_files=(
  [4096]="$results/dff-h4096.csv $results/dff-h4096-fwd.csv"
  [8192]="$results/dff-h8192-fwd.csv")
# Independent timings of each window: "label=file".
declare -A check_sources=(
  [4096]="crest-run-1=$results/dff-h4096.csv crest-run-2=$results/dff-h4096-fwd.csv torch-1=$data/torch-mlp-h4096.csv torch-2=$data/torch-mlp-h4096-repeat.csv torch-3=$results/dff-h4096-fwd.torch.csv"
  [8192]="crest-run-1=$results/dff-h8192-fwd.csv torch-1=$results/dff-h8192-fwd.torch.csv")

# Writes the rows of FILES... whose shape is not among the window's GEMMs:
# leave_out OUT WINDOW_FILES FILES...
leave_out() {
  "$py" - "$@" <<'EOF'
import csv, sys
out, window, files = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def shape(r): return (r["m"], r["n"], r["k"], r.get("batch", "1"), r.get("layout", "NT"), r["dtype"])
held = {shape(r) for f in window for r in csv.DictReader(open(f))}
cols = ["m", "n", "k", "batch", "layout", "dtype", "median_us"]
with open(out, "w", newline="") as o:
    w = csv.writer(o)
    w.writerow(cols)
    for f in files:
        for r in csv.DictReader(open(f)):
            if shape(r) not in held and r["dtype"] == "bf16":
                w.writerow([r.get(c, "1" if c == "batch" else "NT") for c in cols])
EOF
}

printf '%-8s %-12s %10s %12s %22s %16s %18s %9s %9s\n' hidden source spearman median_error \
  "predicted best (gap)" "spearman flat" "median_error flat" coverage "cov x8"
lines=()
for hold in 4096 8192; do
  leave_out "$work/fit-$hold.csv" "${window_files[$hold]}" "${fit_files[@]}"
  "$crest" db import --db "$work/fit-$hold.db" --csv "$work/fit-$hold.csv" --device "$device" \
    --tool "Crest engine (bench/results/h100), window h=$hold left out" >/dev/null
  "$crest" calibrate --db "$work/fit-$hold.db" --gpu h100 --dtype bf16 --source imported \
    --from-defaults --out "$work/cal-$hold.json" >/dev/null
  "$py" - "$work/cal-$hold.json" "$work/flat-$hold.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["parameters"].pop("fallback_k_residue")
json.dump(doc, open(sys.argv[2], "w"))
EOF
  for entry in ${check_sources[$hold]}; do
    label=${entry%%=*}
    file=${entry#*=}
    "$crest" db import --db "$work/check-$hold-$label.db" --csv "$file" --device "$device" \
      --tool "$label" >/dev/null
    for model in cal flat; do
      "$crest" --json --calibration "$work/$model-$hold.json" calibrate --check --source imported \
        --db "$work/check-$hold-$label.db" --gpu h100 --dtype bf16 >"$work/check-$model.json"
    done
    line=$("$py" - "$work/check-cal.json" "$work/check-flat.json" "$hold" "$label" <<'EOF'
import json, sys
def window(path, hold):
    doc = json.load(open(path))
    return doc, next(s for s in doc["studies"] if s["hidden"] == hold and s["candidates"] >= 200)
hold, label = int(sys.argv[3]), sys.argv[4]
doc, s = window(sys.argv[1], hold)
flat_doc, flat = window(sys.argv[2], hold)
print(json.dumps({"hidden": hold, "source": label, "candidates": s["candidates"],
                  "spearman": s["spearman"], "median_error": s["median_error"],
                  "predicted_best": s["predicted_best"], "measured_best": s["measured_best"],
                  "best_gap": s["best_gap"], "model_version": doc["model_version"],
                  "coverage": s["coverage"], "coverage_multiples_of_8": s["coverage_multiples_of_8"],
                  "flat": {"spearman": flat["spearman"], "median_error": flat["median_error"],
                           "model_version": flat_doc["model_version"]}}))
EOF
)
    lines+=("$line")
    "$py" -c 'import json,sys; s=json.loads(sys.argv[1]); f=s["flat"]; print("%-8d %-12s %10.3f %11.1f%% %13d (+%.1f%%) %16.3f %17.1f%% %8.1f%% %8.1f%%" % (s["hidden"], s["source"], s["spearman"], 100*s["median_error"], s["predicted_best"], 100*s["best_gap"], f["spearman"], 100*f["median_error"], 100*s["coverage"], 100*s["coverage_multiples_of_8"]))' "$line"
  done
done
if [[ -n $json_out ]]; then
  printf '%s\n' "${lines[@]}" | "$py" -c 'import json,sys; json.dump([json.loads(l) for l in sys.stdin], open(sys.argv[1], "w"), indent=2)' "$json_out"
fi
