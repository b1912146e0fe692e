#!/bin/sh
# Submits a sweep array and its dependent merge:
#   deploy/slurm/submit.sh SPEC TASKS RESULTS_DIR CATALOGUE [extra sbatch options]
# e.g. deploy/slurm/submit.sh deploy/specs/dff-study.json 8 /shared/crest/results \
#        /shared/crest/catalogue.db --partition=gpu
set -eu
if [ "$#" -lt 4 ]; then
  echo "usage: $0 SPEC TASKS RESULTS_DIR CATALOGUE [sbatch options...]" >&2
  exit 2
fi
spec=$1 tasks=$2 results=$3 catalogue=$4
shift 4
case $tasks in
  '' | *[!0-9]*) echo "$0: TASKS must be a positive number (got '$tasks')" >&2; exit 2 ;;
esac
if [ "$tasks" -lt 1 ]; then
  echo "$0: TASKS must be at least 1" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
spec=$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")

array=$(sbatch --parsable --array=0-$((tasks - 1)) "$@" \
  --export=ALL,CREST_SPEC="$spec",CREST_RESULTS="$results" "$here/crest-sweep.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterany:"$array" "$@" \
  --export=ALL,CREST_RESULTS="$results",CREST_CATALOGUE="$catalogue",CREST_ARRAY_JOB="$array",CREST_TASKS="$tasks" \
  "$here/crest-merge.sbatch")
echo "sweep array $array ($tasks tasks), merge $merge into $catalogue"
