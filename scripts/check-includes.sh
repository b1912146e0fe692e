#!/usr/bin/env bash
# Fails when a tracked source includes CLI11's header outside the files that
# may: crest/common/cmdline.h says why (the header is 7-9 s of compile in
# each file that includes it). Commands declare their flags through
# crest::cmdline; only cmdline.cc and the files that parse a command line
# (and catch CLI11's parse errors) include CLI11. Checked in CI (ctest's
# include_check).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-includes: not a git checkout, so no list of tracked sources: nothing checked"
  exit 0
fi
allowed=(
  clients/crest/run_cli.cc
  common/src/cmdline.cc
  service/crestd_main.cc
  tests/clients/run_cli_test.cc
  tests/support/in_process_crestd.cc
)
mapfile -t found < <(git grep -l -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]CLI/' -- \
  '*.cc' '*.h' '*.cu' '*.cuh' || true)
bad=()
for file in "${found[@]}"; do
  ok=0
  for a in "${allowed[@]}"; do [[ "$file" == "$a" ]] && ok=1; done
  ((ok)) || bad+=("$file")
done
if ((${#bad[@]})); then
  echo "check-includes: CLI11's header is included by ${bad[*]}; declare flags through" \
    "crest/common/cmdline.h instead (or add the file to this script's list if it parses)" >&2
  exit 1
fi
echo "check-includes: CLI11's header is in ${#found[@]} files, each allowed it (${#allowed[@]} may)"
