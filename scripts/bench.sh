#!/usr/bin/env bash
# Runs every benchmark in bench/ against an existing build and prints the
# figures. Usage: scripts/bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
work=$(mktemp -d /tmp/crest-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "== crest design's training step against published runs (target: >= 80% of rows within 0.8-1.25x)"
python3 "$(dirname "$0")/../bench/design_vs_published.py" "$build/clients/crest/crest"
echo
echo "== study race verdicts over simulated races (target: equal candidates called slower in <= 5% of races)"
"$build/bench/race_bench" "$(dirname "$0")/../tests/data/h100-2026-11-22/nvidia-smi-clock-trace.csv"
echo
echo "== predictor (one core; target >= 100,000 predictions/s)"
"$build/bench/predictor_bench" --benchmark_min_time=0.5
echo
echo "== engine host work per GEMM (null device; target on a GPU: <= 20 ms per GEMM in all)"
"$build/bench/engine_bench"
echo
echo "== start-up: what a CLI answer and an idle crestd cost beside crest --version (targets: crest dff <= 64 MB and <= 3x --version; crestd <= 64 MB)"
"$build/bench/startup_bench" "$build/clients/crest/crest" "$build/service/crestd"
echo
echo "== a window's history: ranking cost at 1-64 runs of it (targets: --runs latest <= 1.5x at 16 runs; --runs all linear)"
"$build/bench/history_bench"
echo
echo "== crest.study in process beside the crest binary per ranking and the JSON route (target: <= 1 ms a ranking in process)"
if ls "$build"/python/crest/_native*.so > /dev/null 2>&1; then
  PYTHONPATH="$build/python" /usr/bin/python3 "$(dirname "$0")/../bench/python_study_bench.py" \
    --crest "$build/clients/crest/crest"
else
  echo "crest._native was not built (pybind11-dev missing at configure time): nothing to time in process"
fi
echo
echo "== model-backend sweeps: batched commits beside one per GEMM (target: >= 20,000 GEMMs/s)"
"$build/bench/sweep_bench"
echo
echo "== result store (builds a >= 1,000,000-row database)"
"$build/bench/store_bench" --keep "$work"
echo
echo "== crestd under load (the same database, served over loopback)"
mv "$work/bench.db" "$work/crest.db"
"$build/bench/crestd_load_bench" "$build/service/crestd" "$work"
echo
echo "== gRPC's own cost of a unary call by API (the callback API crestd used until 2026-11-30 beside the completion-queue API with the server's own threads, crestd's now; no work in the call)"
"$build/bench/grpc_api_bench"
echo
echo "== crestd under one greedy client (never-read streams, queued jobs, costly queries, small queries back to back)"
"$build/bench/crestd_hostile_bench" "$build/service/crestd" "$work/hostile"
echo
echo "== fleet: crest fleet pull of 4 crestd into a catalogue; one node's ranking vs the catalogue's"
"$build/bench/fleet_bench" "$build/service/crestd" "$build/clients/crest/crest" 4
echo
echo "== rebuild after a header edit: objects each header's edit recompiles; the rebuild after touching the GEMM type, gemm.h, included by most objects (ccache on: its text unchanged); the real rebuild after touching the times' types, timing.h, whose objects include all of timing_ops.h's (ccache off: as after an edit of its text); target: <= 2 min on 2 cores"
/usr/bin/python3 "$(dirname "$0")/../bench/rebuild_bench.py" "$build" \
  --touch tuner/include/crest/tuner/gemm.h --full tuner/include/crest/tuner/timing.h
