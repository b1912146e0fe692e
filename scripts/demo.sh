#!/usr/bin/env bash
# The main job of `make demo`: start crestd on loopback with its database
# under ./var/, run the h=4096 d_ff sweep through it (measured with cuBLASLt
# when the node has a CUDA device, predicted and labelled so otherwise),
# print the ranked table from a QueryDff call, and stop the daemon cleanly.
# Then, on any machine, a raced answer from recorded timings: the shipped
# PyTorch H100 table replayed through the measuring pipeline (labelled
# replayed, never measured).
# Usage: scripts/demo.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
crest="$build/clients/crest/crest"
crestd="$build/service/crestd"
mkdir -p var
"$crest" --version
echo

rm -f var/crestd.port
"$crestd" --listen 127.0.0.1:0 --state-dir var --port-file var/crestd.port \
  2>>var/crestd.log &
daemon=$!
stop_daemon() {
  if kill -0 "$daemon" 2>/dev/null; then
    kill -TERM "$daemon"
    wait "$daemon" || true
  fi
}
trap stop_daemon EXIT
for _ in $(seq 300); do
  [[ -s var/crestd.port ]] && break
  if ! kill -0 "$daemon" 2>/dev/null; then
    echo "demo: crestd did not start; see var/crestd.log" >&2
    exit 1
  fi
  sleep 0.1
done
server="127.0.0.1:$(cat var/crestd.port)"
echo "crestd listening on $server (database var/crest.db, log var/crestd.log)"
echo
echo "\$ crest --server $server info"
"$crest" --server "$server" info
echo
# The daemon picks cuBLASLt where it has a device, else the model.
echo "\$ crest --server $server sweep --gpu h100 --hidden 4096 --pass train"
"$crest" --server "$server" sweep --gpu h100 --hidden 4096 --pass train
echo
echo "\$ crest --server $server dff --hidden 4096 --gpu h100 --pass train"
"$crest" --server "$server" dff --hidden 4096 --gpu h100 --pass train
echo
echo "\$ crest --server $server explain --m 8192 --n 4096 --k 10922 --gpu h100   # mlp_down at the naive d_ff"
"$crest" --server "$server" explain --m 8192 --n 4096 --k 10922 --gpu h100
echo
stop_daemon
trap - EXIT
echo "crestd stopped (SIGTERM); results stay in var/crest.db: crest dff --db var/crest.db ..."
echo
rm -f var/replay.db var/replay.db-wal var/replay.db-shm
table=tests/data/h100-2026-11-22/torch-mlp-h4096.csv
echo "\$ crest sweep --db var/replay.db --backend replay --replay $table --gpu h100 --hidden 4096 --window 64"
"$crest" sweep --db var/replay.db --backend replay --replay "$table" --gpu h100 --hidden 4096 \
  --window 64
echo
echo "\$ crest dff --db var/replay.db --hidden 4096 --window 64 --gpu h100 --top 8"
"$crest" dff --db var/replay.db --hidden 4096 --window 64 --gpu h100 --top 8
