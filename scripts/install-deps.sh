#!/usr/bin/env bash
# Installs what Weft needs on Debian 12, if anything is missing
# (docs/Building.md).
#   scripts/install-deps.sh            Debian packages for building and
#                                      testing the compiler (no Python
#                                      package: the compiler needs none)
#   scripts/install-deps.sh --python   also the virtual environment build/venv
#                                      with the pinned packages of
#                                      python/requirements.txt (torch 2.x,
#                                      onnx, onnxruntime, transformers) for
#                                      the end-to-end tests; ~5.7 GB
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build clang-16 libclang-rt-16-dev pkg-config python3 ccache
  llvm-16-dev llvm-16-tools libmlir-16-dev mlir-16-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libz3-dev libglpk-dev
  libfmt-dev libgtest-dev libeigen3-dev
  # Tests' helper scripts; the virtual environment below.
  python3-numpy python3-venv
  # rsvg-convert: the timeline picture's test renders it (test/lit/Emit).
  librsvg2-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

[[ ${1:-} == --python ]] || exit 0
venv=${WEFT_VENV:-build/venv}
stamp=$venv/.weft-requirements
if [ -f "$stamp" ] && cmp -s "$stamp" python/requirements.txt; then
  exit 0
fi
echo "install-deps: creating $venv with the pinned packages of python/requirements.txt (~5.7 GB)"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-input -r python/requirements.txt
cp python/requirements.txt "$stamp"
