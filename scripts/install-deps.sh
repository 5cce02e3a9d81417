#!/usr/bin/env bash
# Installs exactly what zeroc's build and tests need, from Debian's packages.
# Idempotent: packages already present are not touched and apt is not even called.
set -euo pipefail

PKGS=(
  cmake ninja-build g++ ccache make
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  libgtest-dev
  python3-torch python3-onnx python3-numpy
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
