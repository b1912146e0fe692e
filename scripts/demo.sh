#!/usr/bin/env bash
# The main job of `make demo`: a predicted d_ff sweep for h=4096 on an H100
# into ./var/crest.db, then the d_ff question answered from that database.
# Usage: scripts/demo.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
crest="$build/clients/crest/crest"
mkdir -p var
"$crest" --version
echo
echo "\$ crest sweep --db var/crest.db --backend model --gpu h100 --hidden 4096 --pass train"
"$crest" sweep --db var/crest.db --backend model --gpu h100 --hidden 4096 --pass train
echo
echo "\$ crest dff --hidden 4096 --gpu h100 --db var/crest.db"
"$crest" dff --hidden 4096 --gpu h100 --db var/crest.db
echo
echo "\$ crest explain --m 8192 --n 4096 --k 10922 --gpu h100   # mlp_down at the naive d_ff"
"$crest" explain --m 8192 --n 4096 --k 10922 --gpu h100
