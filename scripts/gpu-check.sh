#!/usr/bin/env bash
# The GPU check: one command on a GPU machine that runs the engine's GPU
# tests, the seed bmm case, the h=4096 forward d_ff study twice and the same
# shapes through PyTorch under the same protocol, and writes one results
# folder with a summary table (summary.md, summary.json).
#
#   scripts/gpu-check.sh [--build-dir DIR | --bundle DIR] [--out DIR] [--quick]
#   scripts/gpu-check.sh --make-bundle DIR [--build-dir DIR]
#
#   --build-dir DIR    use (or make, with `make build`) the build in DIR (default: build)
#   --make-bundle DIR  on a build machine: put crest, crestd, the GPU tests and the
#                      non-system shared libraries they load into DIR, for a GPU
#                      machine that lacks Debian's libraries; then stop
#   --bundle DIR       run with the binaries of a bundle made by --make-bundle
#   --out DIR          results folder (default: $OUT/gpu-check when $OUT is set, else
#                      gpu-check-results/<date>)
#   --quick            small studies (d_ff window +/-16, bmm K step 40): a smoke run
#
# Exit: 0 every step ran; 1 a step failed (the summary says which); 2 bad usage or
# no CUDA device (nothing measured, nothing simulated).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=build
bundle=
make_bundle=
out=
quick=0
python=${PYTHON:-python3}

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --make-bundle) make_bundle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $build = /* ]] || build=$root/$build

# The shared libraries a binary loads, but the C library, the loader and the
# NVIDIA/CUDA ones (the GPU machine has its own).
bundle_libs() {
  ldd "$@" | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
    case $(basename "$lib") in
      libc.so* | libm.so* | ld-linux* | libdl.so* | libpthread.so* | librt.so* | \
        libcuda.so* | libcudart* | libcublas* | libnvidia* | libnvrtc* | libnvJitLink*) ;;
      *) echo "$lib" ;;
    esac
  done
}

if [[ -n $make_bundle ]]; then
  make -C "$root" build BUILD_DIR="$build" || exit 1
  cmake --build "$build" --target cublaslt_test || exit 1
  [[ -x $build/tests/cublaslt_test ]] || {
    echo "gpu-check: $build has no cublaslt_test: the build found no CUDA toolkit" >&2
    exit 1
  }
  rm -rf "$make_bundle" && mkdir -p "$make_bundle/bin" "$make_bundle/lib"
  cp "$build/clients/crest/crest" "$build/service/crestd" "$build/tests/cublaslt_test" \
    "$make_bundle/bin/"
  # The measuring engine, found by the binaries in ../lib.
  cp "$build/lib/libcrest_cublaslt.so" "$make_bundle/lib/"
  bundle_libs "$make_bundle"/bin/* "$make_bundle/lib/libcrest_cublaslt.so" |
    while read -r lib; do cp -L "$lib" "$make_bundle/lib/"; done
  echo "gpu-check: bundle in $make_bundle ($(du -sh "$make_bundle" | cut -f1)); on the GPU" \
    "machine: scripts/gpu-check.sh --bundle $make_bundle"
  exit 0
fi

if [[ -n $bundle ]]; then
  bin=$bundle/bin
  crest=$bin/crest
  gpu_tests=$bin/cublaslt_test
  export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
else
  if [[ ! -x $build/clients/crest/crest ]]; then
    make -C "$root" build BUILD_DIR="$build" || exit 1
  fi
  crest=$build/clients/crest/crest
  gpu_tests=$build/tests/cublaslt_test
fi
if [[ -z $out ]]; then
  if [[ -n ${OUT:-} ]]; then out=$OUT/gpu-check; else out=$root/gpu-check-results/$(date +%Y%m%d-%H%M%S); fi
fi
mkdir -p "$out" || exit 2
log=$out/gpu-check.log
failed=()

# step NAME COMMAND...: runs one step with its output in NAME.log, timed.
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name" | tee -a "$log"
  if "$@" >"$out/$name.log" 2>&1; then
    echo "   ok ($((SECONDS - start)) s)" | tee -a "$log"
  else
    echo "   FAILED ($((SECONDS - start)) s): see $out/$name.log" | tee -a "$log"
    failed+=("$name")
  fi
}

"$crest" info --json >"$out/info.json" 2>"$out/info.log"
gpu=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"]; print(d[0]["gpu_model"] if d else "")' "$out/info.json" 2>/dev/null)
if [[ -z $gpu ]]; then
  echo "gpu-check: no CUDA device (see $out/info.json): nothing was measured" | tee -a "$log" >&2
  exit 2
fi
echo "gpu-check: $gpu; results in $out" | tee -a "$log"

window=128
k_step=4
if [[ $quick -eq 1 ]]; then window=16; k_step=40; fi
cat >"$out/seed-bmm.spec.json" <<SPEC
{"version": 1, "name": "seed-bmm", "gemms": [
  {"name": "bmm", "m": 4096, "n": 4096, "k": {"from": 10820, "to": 11020, "step": $k_step},
   "batch": 4, "dtype": "fp16", "layout": "NN"},
  {"name": "bmm", "m": 4096, "n": 4096, "k": 10922, "batch": 4, "dtype": "fp16", "layout": "NN"}]}
SPEC

step gpu-tests "$gpu_tests" --gtest_output="json:$out/gpu-tests.json"
step seed-bmm sh -c "'$crest' sweep --db '$out/seed-bmm.db' --spec '$out/seed-bmm.spec.json' \
  --backend cublaslt --json >'$out/seed-bmm.sweep.json'"
for run in 1 2; do
  # Both runs race the fastest algorithms' answer (compared in the summary);
  # the second races cuBLASLt's first choices' answer too.
  race_algos=best
  if [[ $run -eq 2 ]]; then race_algos=best,default; fi
  step "mlp-fwd-$run" sh -c "'$crest' sweep --db '$out/mlp-fwd-$run.db' --hidden 4096 \
    --window $window --backend cublaslt --race-algos $race_algos \
    --json >'$out/mlp-fwd-$run.sweep.json' && \
    '$crest' dff --db '$out/mlp-fwd-$run.db' --hidden 4096 --window $window --gpu '$gpu' \
    --top 0 --json >'$out/mlp-fwd-$run.dff.json'"
done
quick_flag=()
if [[ $quick -eq 1 ]]; then quick_flag=(--quick); fi
step torch-seed-bmm "$python" "$root/bench/torch_compare.py" seed-bmm \
  --out "$out/torch-seed-bmm.csv" "${quick_flag[@]}"
step torch-mlp "$python" "$root/bench/torch_compare.py" mlp --hidden 4096 \
  --out "$out/torch-mlp.csv" "${quick_flag[@]}"
step torch-race "$python" "$root/bench/torch_compare.py" race --db "$out/mlp-fwd-1.db" \
  --out "$out/torch-race.csv"
step summary "$python" "$root/bench/gpu_check_summary.py" "$out"
cat "$out/summary.md" 2>/dev/null

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "gpu-check: failed: ${failed[*]}" | tee -a "$log" >&2
  exit 1
fi
echo "gpu-check: every step ran; $out/summary.md" | tee -a "$log"
