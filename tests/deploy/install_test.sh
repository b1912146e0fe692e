#!/bin/sh
# `cmake --install` puts the binaries, the unit, the example config, the
# manifests and the docs in the usual places under the prefix, and never
# the bundle's copies of system libraries.
#   install_test.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/usr/local" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
for f in bin/crest bin/crestd lib/systemd/system/crestd.service share/crest/crestd.conf.example \
  share/crest/k8s/base/kustomization.yaml share/crest/k8s/servicemonitor.yaml \
  share/crest/slurm/submit.sh share/crest/specs/llama-training.json share/doc/crest/deploy.md; do
  [ -e "$tmp/usr/local/$f" ] || { echo "FAIL: no $f"; ls -R "$tmp"; exit 1; }
done
[ -x "$tmp/usr/local/share/crest/slurm/submit.sh" ] || { echo "FAIL: submit.sh lost its mode"; exit 1; }
# lib/crest holds the measuring engine (CUDA builds) and nothing else: the
# bundle's libraries stay out of a plain install.
for f in "$tmp/usr/local/lib/crest"/*; do
  [ -e "$f" ] || continue
  [ "$(basename "$f")" = libcrest_cublaslt.so ] ||
    { echo "FAIL: a plain install carries bundle libraries: $f"; exit 1; }
done
"$tmp/usr/local/bin/crest" --version | grep -q '^crest '
# The installed crest finds the installed engine, not the build tree's.
if [ -e "$build/lib/libcrest_cublaslt.so" ]; then
  [ -e "$tmp/usr/local/lib/crest/libcrest_cublaslt.so" ] || { echo "FAIL: no engine installed"; exit 1; }
  "$tmp/usr/local/bin/crest" doctor --no-daemon --state-dir "$tmp" >"$tmp/doctor" 2>&1 || true
  grep -q "engine $tmp/usr/local/lib/crest/libcrest_cublaslt.so\|$tmp/usr/local/lib/crest/libcrest_cublaslt.so cannot be loaded" "$tmp/doctor" ||
    { cat "$tmp/doctor"; echo "FAIL: the installed crest did not use the installed engine"; exit 1; }
fi
echo "ok: installed under $tmp/usr/local"
