#!/usr/bin/env bash
# Runs every benchmark in bench/ against an existing build and prints the
# figures. Usage: scripts/bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
echo "== predictor (one core; target >= 100,000 predictions/s)"
"$build/bench/predictor_bench" --benchmark_min_time=0.5
echo
echo "== result store (builds a >= 1,000,000-row database in a temporary directory)"
"$build/bench/store_bench"
