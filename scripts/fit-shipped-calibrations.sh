#!/usr/bin/env bash
# Refits the predictor calibrations shipped in tuner/calibrations/ from the
# first H100 run's PyTorch timings (shared/data/h100-2026-11-22/, or the copy
# in tests/data/h100-2026-11-22/): the CSVs are imported as they are and
# `crest calibrate` fits bf16 to the SwiGLU MLP window (both runs) and fp16 to
# the seed bmm case. Usage: scripts/fit-shipped-calibrations.sh [BUILD_DIR] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=${2:-$root/tests/data/h100-2026-11-22}
crest=$build/clients/crest/crest
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
device="NVIDIA H100 80GB HBM3"
software="PyTorch 2.11.0+cu130, CUDA runtime 13.0.88, cuBLASLt 13.1.0.3, driver 580.159.04; measured 2026-11-22"
for csv in torch-mlp-h4096.csv torch-mlp-h4096-repeat.csv; do
  "$crest" db import --db "$work/h100-2026-11-22-pytorch.db" --csv "$data/$csv" --device "$device" \
    --tool "torch.matmul, 10 warm-ups then the median of 20 single-launch event timings, one operand set (torch_fast.py); $software"
done
"$crest" db import --db "$work/h100-2026-11-22-pytorch.db" --csv "$data/torch-seed-bmm.csv" --device "$device" \
  --tool "torch.bmm, 20 warm-ups then the median of 30 single-launch event timings, one operand set (torch_ref.py); $software"
# Fit against the defaults, not against the calibrations this build ships.
"$crest" calibrate --db "$work/h100-2026-11-22-pytorch.db" --gpu h100 --dtype bf16 --from-defaults \
  --out "$root/tuner/calibrations/h100-sxm-bf16.json"
"$crest" calibrate --db "$work/h100-2026-11-22-pytorch.db" --gpu h100 --dtype fp16 --from-defaults \
  --out "$root/tuner/calibrations/h100-sxm-fp16.json"
