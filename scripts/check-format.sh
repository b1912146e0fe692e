#!/usr/bin/env bash
# Fails when a tracked C++ source is not as .clang-format has it: the tree's
# one style, checked in CI (ctest's format_check). clang-format is Debian's
# (scripts/install-deps.sh installs it). To fix a file:
#   clang-format --style=file -i FILE
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-format: not a git checkout, so no list of tracked sources: nothing checked"
  exit 0
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
clang-format --style=file --dry-run -Werror "${files[@]}"
echo "check-format: ${#files[@]} sources as .clang-format has them"
