#!/bin/bash
# deploy/slurm on a real Slurm: a single-node cluster from Debian's slurmctld,
# slurmd and munge, configured in a temporary directory (its own munge
# socket and key, ports, state and spool; nothing under /etc is touched),
# runs deploy/slurm/submit.sh as written with a spec sharded over an array of
# 3 tasks (the model backend: no GPU; the node declares 2 GPUs as a generic
# resource, so the scripts' --gres=gpu:1 is honoured), waits for the
# dependent merge, and checks the catalogue: every GEMM once, `db check`
# passes, a second merge adds nothing. Needs root (slurmd runs jobs as their
# user and munged is started as root here); exit 77 = skipped, saying why.
#   slurm_cluster_test.sh REPO CREST_BIN [TIMEOUT_S]
set -euo pipefail
timeout_s=${3:-180}
skip() { echo "SKIP: $*"; exit 77; }
# Absolute, so both still hold after the test changes into its work folder.
repo=$(cd "$1" && pwd) || { echo "FAIL: no repository at $1" >&2; exit 1; }
crest=$(realpath -e "$2") || { echo "FAIL: no crest binary at $2" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "not root: slurmd and munged need root to start here"
for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || skip "$tool is not installed (scripts/install-deps.sh installs slurmctld, slurmd, slurm-client, munge)"
done
export PATH="/usr/sbin:$PATH"
started=$(date +%s)
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$tmp"/log/*.log "$tmp"/work/*.out; do
    [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
  done
  exit 1
}
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$tmp"/{munge,state,spool,log,work,results}
chmod 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --foreground --socket="$tmp/munge/munge.sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" \
  --seed-file="$tmp/munge/munge.seed" &
pids+=($!)

host=$(hostname -s)
cat >"$tmp/slurm.conf" <<CONF
ClusterName=cresttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=32768 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
# Two stand-in GPU device files: enough for Slurm to count and hand out.
mkdir -p "$tmp/dev"
: >"$tmp/dev/gpu0"
: >"$tmp/dev/gpu1"
cat >"$tmp/gres.conf" <<CONF
AutoDetect=off
NodeName=$host Name=gpu File=$tmp/dev/gpu[0-1]
CONF
export SLURM_CONF="$tmp/slurm.conf"
for _ in $(seq 50); do [ -S "$tmp/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.sock" ] || fail "munged did not start"
slurmctld -D -i >>"$tmp/log/slurmctld.stdout.log" 2>&1 &
pids+=($!)
slurmd -D >>"$tmp/log/slurmd.stdout.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "the node did not come up (state '$state')"

# A d_ff window of 17 candidates, forward and train: 3 tasks share its GEMMs.
cat >"$tmp/spec.json" <<'JSON'
{"version": 1, "dff": [{"hidden": 4096, "window": 8, "pass": "train"}]}
JSON
cd "$tmp/work"
CREST_BIN="$crest" CREST_BACKEND=model CREST_GPU=h100 TMPDIR="$tmp/work" \
  bash "$repo/deploy/slurm/submit.sh" "$tmp/spec.json" 3 "$tmp/results" "$tmp/catalogue.db" \
  >"$tmp/log/submit.log" 2>&1 || fail "submit.sh: $(cat "$tmp/log/submit.log")"
read -r _ _ array _ _ _ merge _ <"$tmp/log/submit.log"
[ -n "$merge" ] || fail "submit.sh said: $(cat "$tmp/log/submit.log")"
deadline=$((started + timeout_s))
while squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "the jobs did not finish within ${timeout_s} s: $(squeue)"
  sleep 0.5
done
merge_state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$merge_state" = COMPLETED ] || fail "the merge job ended $merge_state"
grep -q "merged 3 of 3 task snapshots" "$tmp/work/crest-merge-$merge.out" ||
  fail "the merge did not fold 3 snapshots"

# Every GEMM of the spec once: the tasks' shares are disjoint and complete.
"$crest" --json db stats --db "$tmp/catalogue.db" >"$tmp/stats.json"
"$crest" --json sweep --spec "$tmp/spec.json" --backend model --gpu h100 --db "$tmp/alone.db" >/dev/null
"$crest" --json db stats --db "$tmp/alone.db" >"$tmp/alone.json"
/usr/bin/python3 - "$tmp/stats.json" "$tmp/alone.json" "$tmp/work/crest-merge-$merge.out" <<'PY' ||
import json, re, sys
merged, alone = (json.load(open(p)) for p in sys.argv[1:3])
assert merged["predictions"] == alone["predictions"] > 0, (merged["predictions"], alone["predictions"])
assert merged["jobs_by_state"] == {"done": 3}, merged["jobs_by_state"]
# Each task brought its own share: no GEMM was swept twice.
shares = [int(n) for n in re.findall(r"\+(\d+) predictions", open(sys.argv[3]).read())]
assert len(shares) == 3 and all(shares) and sum(shares) == alone["predictions"], shares
print(f"shares {shares} of {alone['predictions']} GEMMs")
PY
  fail "the catalogue is not the spec's GEMMs once each"
"$crest" db check --db "$tmp/catalogue.db" >/dev/null || fail "db check failed"
CREST_RESULTS="$tmp/results" CREST_CATALOGUE="$tmp/catalogue.db" CREST_ARRAY_JOB="$array" \
  CREST_BIN="$crest" bash "$repo/deploy/slurm/crest-merge.sbatch" >"$tmp/log/remerge.log" 2>&1 ||
  fail "the second merge failed"
grep -q '+0 measurements, +0 predictions, +0 imported timings, +0 races, +0 jobs' "$tmp/log/remerge.log" ||
  fail "a second merge added rows: $(cat "$tmp/log/remerge.log")"
echo "PASS: array $array (3 tasks) and merge $merge on a one-node Slurm in $(($(date +%s) - started)) s"
