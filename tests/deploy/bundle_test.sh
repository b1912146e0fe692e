#!/bin/sh
# `make bundle` (CPack): the archive is built, extracted into a temporary
# directory and its crest and crestd run from there with LD_LIBRARY_PATH
# cleared. Every shared library they load comes from the bundle, except the C
# library and the NVIDIA/CUDA ones that a GPU node provides.
#   bundle_test.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cpack --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 || {
  cat "$tmp/cpack.log"
  exit 1
}
archive=$(ls "$tmp"/pkg/crest-*.tar.gz)
mkdir "$tmp/x"
tar -xzf "$archive" -C "$tmp/x"
dir=$(ls -d "$tmp"/x/crest-*)
echo "bundle: $(basename "$archive"), $(du -k "$archive" | cut -f1) KiB"

for f in bin/crest bin/crestd lib/systemd/system/crestd.service share/crest/crestd.conf.example \
  share/crest/k8s/base/daemonset.yaml share/crest/slurm/crest-sweep.sbatch \
  share/crest/specs/dff-study.json share/doc/crest/deploy.md; do
  [ -e "$dir/$f" ] || { echo "FAIL: bundle lacks $f"; exit 1; }
done
for lib in libgrpc++.so libprotobuf.so libabsl_base.so libsqlite3.so libstdc++.so; do
  ls "$dir"/lib/crest/"$lib"* >/dev/null 2>&1 || { echo "FAIL: bundle lacks $lib"; exit 1; }
done
for f in "$dir"/lib/crest/*; do
  case $(basename "$f") in
    libc.so* | libcuda.so* | libcudart* | libcublas* | libnvidia*)
      echo "FAIL: bundle carries $(basename "$f") (the node provides it)"
      exit 1
      ;;
  esac
done

# From another directory, with nothing but the bundle to find libraries in.
cd /
run() { env -i PATH=/usr/bin:/bin HOME="$tmp" "$@"; }
run "$dir/bin/crest" --version >"$tmp/version"
grep -q '^crest ' "$tmp/version" || { cat "$tmp/version"; echo "FAIL: crest --version"; exit 1; }
run "$dir/bin/crestd" --help >"$tmp/help"
grep -q -- '--state-dir' "$tmp/help" || { echo "FAIL: crestd --help"; exit 1; }
for bin in crest crestd; do
  run ldd "$dir/bin/$bin" >"$tmp/ldd"
  if grep -q 'not found' "$tmp/ldd"; then
    cat "$tmp/ldd"
    echo "FAIL: $bin has unresolved libraries"
    exit 1
  fi
  outside=$(grep '=>' "$tmp/ldd" | sed 's|/bin/\.\./lib/|/lib/|' | grep -v "$dir/lib/crest/" |
    grep -Ev '^\s*(libc|libm|libdl|libpthread|librt|libcuda|libcudart|libcublas|libcublasLt|libnvidia[^ ]*)\.so' || true)
  if [ -n "$outside" ]; then
    echo "$outside"
    echo "FAIL: $bin loads libraries from outside the bundle"
    exit 1
  fi
done

# The engine (CUDA builds) finds its libraries in the bundle too, but the
# CUDA ones, which the node provides.
if [ -e "$dir/lib/crest/libcrest_cublaslt.so" ]; then
  run ldd "$dir/lib/crest/libcrest_cublaslt.so" >"$tmp/ldd"
  missing=$(grep 'not found' "$tmp/ldd" | grep -Ev '^\s*(libcuda|libcudart|libcublas|libcublasLt)\.so' || true)
  [ -z "$missing" ] || { echo "$missing"; echo "FAIL: the engine has unresolved libraries"; exit 1; }
fi

# The bundled daemon serves the bundled client.
mkdir "$tmp/state"
# Not through run(): a backgrounded function is a subshell, and killing its
# pid would leave crestd running. env execs crestd, so $! is crestd's pid.
env -i PATH=/usr/bin:/bin HOME="$tmp" "$dir/bin/crestd" --listen 127.0.0.1:0 \
  --state-dir "$tmp/state" --port-file "$tmp/port" --shutdown-grace 1 >"$tmp/crestd.log" 2>&1 &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
[ -s "$tmp/port" ] || { cat "$tmp/crestd.log"; echo "FAIL: bundled crestd did not start"; exit 1; }
run "$dir/bin/crest" --server "127.0.0.1:$(cat "$tmp/port")" info >"$tmp/info"
grep -q '^crestd ' "$tmp/info" || { cat "$tmp/info"; echo "FAIL: crest info --server"; exit 1; }
kill "$pid"
wait "$pid" || true
pid=

floor=$(for f in "$dir"/bin/* "$dir"/lib/crest/*; do
  [ -L "$f" ] || objdump -T "$f" 2>/dev/null
done | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
echo "ok: runs from $dir with LD_LIBRARY_PATH cleared; needs $floor or newer on the node"
