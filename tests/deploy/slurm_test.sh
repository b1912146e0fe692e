#!/bin/sh
# deploy/slurm without Slurm: two array tasks of crest-sweep.sbatch run as
# plain scripts (the model backend, since no GPU is assumed), then
# crest-merge.sbatch folds their snapshots into a catalogue, twice (the
# second merge adds nothing); submit.sh wires the merge after the array (a
# stand-in sbatch records the calls).
#   slurm_test.sh REPO CREST_BIN
set -eu
repo=$1 crest=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/spec.json" <<'JSON'
{"version": 1, "dff": [{"hidden": 4096, "window": 8}]}
JSON
export CREST_BIN="$crest" CREST_SPEC="$tmp/spec.json" CREST_RESULTS="$tmp/results"
export CREST_BACKEND=model CREST_GPU=h100 TMPDIR="$tmp" SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_COUNT=2
for task in 0 1; do
  SLURM_ARRAY_TASK_ID=$task bash "$repo/deploy/slurm/crest-sweep.sbatch" >"$tmp/task$task.log" 2>&1 || {
    cat "$tmp/task$task.log"
    echo "FAIL: sweep task $task"
    exit 1
  }
done
[ "$(find "$tmp/results" -name 'crest-4242_*.db' | wc -l)" -eq 2 ] || { echo "FAIL: expected 2 snapshots"; exit 1; }
[ ! -e "$tmp/crest-4242_0.db" ] || { echo "FAIL: the local database was left behind"; exit 1; }

export CREST_CATALOGUE="$tmp/catalogue.db" CREST_ARRAY_JOB=4242 CREST_TASKS=2
bash "$repo/deploy/slurm/crest-merge.sbatch" >"$tmp/merge.log" 2>&1 || { cat "$tmp/merge.log"; exit 1; }
grep -q 'merged 2 of 2 task snapshots' "$tmp/merge.log" || { cat "$tmp/merge.log"; exit 1; }
"$crest" --json db stats --db "$tmp/catalogue.db" >"$tmp/stats1"
bash "$repo/deploy/slurm/crest-merge.sbatch" >"$tmp/merge2.log" 2>&1
grep -q '+0 measurements, +0 predictions, +0 imported timings, +0 races, +0 jobs' "$tmp/merge2.log" || { cat "$tmp/merge2.log"; exit 1; }
"$crest" --json db stats --db "$tmp/catalogue.db" >"$tmp/stats2"
grep -q '"done": 2' "$tmp/stats1" || { cat "$tmp/stats1"; echo "FAIL: two jobs expected"; exit 1; }
diff "$tmp/stats1" "$tmp/stats2"

# A missing task is reported and fails the merge step.
CREST_TASKS=3 bash "$repo/deploy/slurm/crest-merge.sbatch" >"$tmp/merge3.log" 2>&1 && {
  echo "FAIL: merge with a missing task exited 0"
  exit 1
}
grep -q '1 task(s) left no snapshot' "$tmp/merge3.log" || { cat "$tmp/merge3.log"; exit 1; }

# submit.sh: an array of 3, then the merge after it (afterany).
mkdir "$tmp/bin"
cat >"$tmp/bin/sbatch" <<'SH'
#!/bin/sh
echo "$*" >>"$SBATCH_LOG"
n=$(wc -l <"$SBATCH_LOG")
echo "$((1000 + n))"
SH
chmod +x "$tmp/bin/sbatch"
SBATCH_LOG="$tmp/sbatch.log" PATH="$tmp/bin:$PATH" \
  sh "$repo/deploy/slurm/submit.sh" "$tmp/spec.json" 3 /shared/r /shared/c.db --partition=gpu >"$tmp/submit.out"
sed -n 1p "$tmp/sbatch.log" | grep -q -- '--array=0-2 --partition=gpu --export=ALL,CREST_SPEC=' || {
  cat "$tmp/sbatch.log"
  exit 1
}
sed -n 2p "$tmp/sbatch.log" | grep -q -- '--dependency=afterany:1001 .*CREST_ARRAY_JOB=1001,CREST_TASKS=3' || {
  cat "$tmp/sbatch.log"
  exit 1
}
if sh "$repo/deploy/slurm/submit.sh" "$tmp/spec.json" zero /r /c.db 2>"$tmp/err"; then
  echo "FAIL: a bad TASKS was accepted"
  exit 1
fi
grep -q "TASKS must be a positive number (got 'zero')" "$tmp/err"
echo "ok: sweep tasks, merge (idempotent), missing task reported, submit wiring"
