#!/bin/bash
# Instructions crestd spends a call on an uncached QueryDff (h100, hidden
# 4096, the default window and top: the load bench's request), counted by
# callgrind over CALLS calls made with `crest dff --server`, all of crestd's
# threads, user space only. Unlike CPU time (crestd_load_bench's
# crestd_cpu_us) the count does not move with the machine's state, so two
# binaries compare in one run even on a noisy VM. Each call is a new
# connection (the CLI's): about 180k instructions of gRPC's that the load
# bench's clients, which keep theirs, do not cost.
#
# Usage: bench/crestd_call_instructions.sh CRESTD CREST DB [CALLS [WINDOW]]
#   DB: a database crestd can serve (crest.db of crestd_load_bench's state
#   directory); it is copied, not changed. CALLS: 100 by default. WINDOW:
#   the query's --window (crest dff's default when not given).
# Needs valgrind (not installed by scripts/install-deps.sh: apt-get install valgrind).
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
crestd=$(realpath "$1")
crest=$(realpath "$2")
db=$3
calls=${4:-100}
window=(${5:+--window "$5"})
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
command -v callgrind_control >/dev/null || { echo "callgrind_control is missing (valgrind)" >&2; exit 2; }

[ -e "$db" ] || { echo "no database at $db" >&2; exit 2; }
pid=
dir=$(mktemp -d)
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for f in "$db" "$db-wal" "$db-shm"; do
  if [ -e "$f" ]; then cp "$f" "$dir/crest.db${f#"$db"}"; fi
done
# Instrumented only between the warm-up and the end of the counted calls.
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/out" "$crestd" \
  --listen 127.0.0.1:0 --state-dir "$dir" --port-file "$dir/port" --answer-cache 0 \
  >"$dir/crestd.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$dir/port" ] && break; sleep 1; done
[ -s "$dir/port" ] || { echo "crestd did not start under valgrind:" >&2; tail "$dir/crestd.log" >&2; exit 1; }
ask() { "$crest" --server "127.0.0.1:$(cat "$dir/port")" dff --hidden 4096 --gpu h100 "${window[@]}" >/dev/null; }
for _ in 1 2 3 4 5; do ask; done
callgrind_control -i on "$pid" >/dev/null 2>&1
for _ in $(seq "$calls"); do ask; done
callgrind_control -i off "$pid" >/dev/null 2>&1
callgrind_control -d "$pid" >/dev/null 2>&1
total=$(grep -h '^totals:' "$dir"/out.* | awk '{s += $2} END {print s}')
echo "$1: $((total / calls)) instructions a QueryDff (${calls} calls${5:+, window $5}, callgrind)"
