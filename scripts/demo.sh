#!/usr/bin/env bash
# The main job of `make demo`: rank d_ff near 8/3*h for h=4096 on an H100.
# Usage: scripts/demo.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
crest="$build/clients/crest/crest"
"$crest" --version
echo
echo "\$ crest dff --hidden 4096 --gpu h100"
"$crest" dff --hidden 4096 --gpu h100
echo
echo "\$ crest explain --m 8192 --n 4096 --k 10922 --gpu h100   # mlp_down at the naive d_ff"
"$crest" explain --m 8192 --n 4096 --k 10922 --gpu h100
