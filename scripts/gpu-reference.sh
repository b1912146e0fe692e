#!/usr/bin/env bash
# Reference results on a GPU machine: Crest's engine on the studies in
# bench/studies/ (one spec each), the same GEMMs through PyTorch under the same
# protocol, and a trace of the GPU's clock and power all along. Everything is
# written to one results folder; sweeps resume, so a folder carried back to a
# later run continues where a time limit stopped it.
#
#   scripts/gpu-reference.sh --bundle DIR --results DIR [--deadline-s N] STEP...
#
#   --bundle DIR      binaries made by `scripts/gpu-check.sh --make-bundle DIR`
#   --results DIR     results folder (created; kept between runs)
#   --deadline-s N    stop starting steps N seconds after the start, and cut a
#                     sweep short (SIGTERM: its job is cancelled, every finished
#                     GEMM kept) so that the whole run ends by then (default 540)
#   STEP              sweep:NAME        crest sweep of bench/studies/NAME.json into NAME.db
#                     repeat:NAME       the same sweep again into NAME-repeat.db
#                     torch:NAME        torch_compare.py over NAME.db's GEMMs -> NAME.torch.csv
#                     tests             the GPU tests (cublaslt_test)
#
# Every figure is measured on the device this runs on; nothing is predicted.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bundle=
results=
deadline_s=540
python=${PYTHON:-python3}
steps=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --bundle) bundle=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --deadline-s) deadline_s=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-reference: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) steps+=("$1"); shift ;;
  esac
done
if [[ -z $bundle || -z $results || ${#steps[@]} -eq 0 ]]; then
  echo "gpu-reference: needs --bundle, --results and at least one STEP (see --help)" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
crest=$bundle/bin/crest
if [[ ! -x $crest ]]; then
  echo "gpu-reference: no $crest (make the bundle with scripts/gpu-check.sh --make-bundle DIR)" >&2
  exit 2
fi
mkdir -p "$results" || exit 2
log=$results/reference.log
start=$SECONDS
left() { echo $((deadline_s - (SECONDS - start))); }

nvidia-smi -q >"$results/nvidia-smi-q-$(date +%H%M%S).txt" 2>&1
"$crest" info --json >"$results/info.json" 2>>"$log"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv,nounits -lms 500 >>"$results/smi-trace.csv" 2>/dev/null &
trace=$!
trap 'kill $trace 2>/dev/null' EXIT

sweep() {  # sweep NAME DB
  local spec=$root/bench/studies/$1.json
  timeout -s TERM "$(($(left) - 20))" "$crest" sweep --db "$results/$2.db" --spec "$spec" \
    --backend cublaslt --json >"$results/$2.sweep.json" 2>"$results/$2.sweep.log"
}

failed=()
for step in "${steps[@]}"; do
  if [[ $(left) -lt 40 ]]; then
    echo "== $step: not started ($(left) s left)" | tee -a "$log"
    failed+=("$step")
    continue
  fi
  name=${step#*:}
  t0=$SECONDS
  echo "== $step ($(date -u +%FT%TZ), $(left) s left)" | tee -a "$log"
  case $step in
    sweep:*) sweep "$name" "$name" ;;
    repeat:*) sweep "$name" "$name-repeat" ;;
    torch:*) timeout -s TERM "$(($(left) - 10))" "$python" "$root/bench/torch_compare.py" db \
      --db "$results/$name.db" --out "$results/$name.torch.csv" 2>"$results/$name.torch.log" ;;
    tests) "$bundle/bin/cublaslt_test" --gtest_output="json:$results/gpu-tests.json" \
      >"$results/gpu-tests.log" 2>&1 ;;
    *) echo "gpu-reference: unknown step '$step'" >&2; false ;;
  esac
  rc=$?
  echo "   rc=$rc ($((SECONDS - t0)) s)" | tee -a "$log"
  [[ $rc -eq 0 ]] || failed+=("$step")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "gpu-reference: not finished: ${failed[*]}" | tee -a "$log"
  exit 1
fi
echo "gpu-reference: every step ran" | tee -a "$log"
