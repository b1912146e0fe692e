#!/usr/bin/env bash
# Installs the Debian 12 packages Crest builds and tests with, and only those
# that are missing. Safe to run again: a machine that has everything installs
# nothing and exits 0. Uses sudo when not root. The CUDA toolkit is optional
# and is never installed here (the build leaves the measuring backend out
# without it).
set -euo pipefail

readonly PACKAGES=(
  build-essential
  ccache
  clang-format
  lld
  cmake
  pkgconf
  libabsl-dev
  libboost-dev
  libcli11-dev
  nlohmann-json3-dev
  libsqlite3-dev
  zlib1g-dev
  libcsv-dev
  sqlite3
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libgrpc++-dev
  libprotobuf-dev
  protobuf-compiler
  protobuf-compiler-grpc
  prometheus-cpp-dev
  openssl
  pybind11-dev
  python3-dev
  python3-grpcio
  python3-matplotlib
  python3-pandas
  python3-pip
  python3-protobuf
  python3-pytest
  python3-setuptools
  python3-venv
  python3-wheel
  python3-yaml
  slurmctld
  slurmd
  slurm-client
  munge
  yamllint
  shellcheck
)
# kubectl (its built-in kustomize renders deploy/k8s in the tests): Debian's,
# unless one is installed already (another package's would conflict).
optional=()
command -v kubectl >/dev/null 2>&1 || optional+=(kubernetes-client)

missing=()
for pkg in "${PACKAGES[@]}" "${optional[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all $((${#PACKAGES[@]} + ${#optional[@]})) packages present"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1; then
  sudo_cmd=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and not root, and sudo is not installed" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
