#!/usr/bin/env bash
# Refits the predictor calibrations shipped in tuner/calibrations/ from Crest's
# own measurements on an H100 (the reference results of 2026-11-23,
# bench/results/h100/reference.db.gz: every study's database merged): bf16
# from the d_ff, heads and TP studies, fp16 from the seed bmm case. Each fit
# starts from the model's defaults, not from the calibrations this build ships.
# Usage: scripts/fit-shipped-calibrations.sh [BUILD_DIR] [REFERENCE_DB_GZ]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
reference=${2:-$root/bench/results/h100/reference.db.gz}
crest=$build/clients/crest/crest
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gunzip -c "$reference" >"$work/reference.db"
# The file is kept as it was measured (schema 6); this crest may read a newer one.
"$crest" db check --upgrade --db "$work/reference.db" >/dev/null
for dtype in bf16 fp16; do
  "$crest" calibrate --db "$work/reference.db" --gpu h100 --dtype "$dtype" --from-defaults \
    --out "$root/tuner/calibrations/h100-sxm-$dtype.json"
done
