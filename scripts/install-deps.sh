#!/usr/bin/env bash
# Installs the Debian 12 packages Weft needs, if any is missing (docs/Building.md).
set -euo pipefail

packages=(
  cmake ninja-build clang-16 libclang-rt-16-dev pkg-config python3 ccache
  llvm-16-dev llvm-16-tools libmlir-16-dev mlir-16-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libz3-dev libglpk-dev
  libfmt-dev libgtest-dev libeigen3-dev
  # End-to-end tests: models exported by PyTorch, checked with ONNX.
  python3-onnx python3-torch python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
