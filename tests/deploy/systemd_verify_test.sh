#!/bin/sh
# deploy/systemd/crestd.service passes `systemd-analyze verify` with no
# complaint (verify exits 0 on some bad values but prints them, so any output
# fails), with ExecStart pointed at the crestd just built.
#   systemd_verify_test.sh UNIT CRESTD_BIN
set -eu
unit=$1 crestd=$2
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -q '^ExecStart=/usr/local/bin/crestd ' "$unit"
sed "s|^ExecStart=/usr/local/bin/crestd |ExecStart=$crestd |" "$unit" >"$tmp/crestd.service"
if ! systemd-analyze verify "$tmp/crestd.service" >"$tmp/out" 2>&1; then
  cat "$tmp/out"
  echo "FAIL: systemd-analyze verify exited non-zero"
  exit 1
fi
if [ -s "$tmp/out" ]; then
  cat "$tmp/out"
  echo "FAIL: systemd-analyze verify complained"
  exit 1
fi
for key in 'StateDirectory=crest' 'Restart=on-failure' 'NoNewPrivileges=yes' \
  'ProtectSystem=strict' 'ExecStart=/usr/local/bin/crestd --config /etc/crest/crestd.conf'; do
  grep -q "^$key" "$unit" || { echo "FAIL: $unit lacks $key"; exit 1; }
done
# Hiding /dev would hide the GPUs.
if grep -Eq '^(PrivateDevices=yes|DevicePolicy=closed|DevicePolicy=strict)' "$unit"; then
  echo "FAIL: $unit hides the GPU devices"
  exit 1
fi
echo "ok: systemd-analyze verify is clean"
