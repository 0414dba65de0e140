#!/usr/bin/env bash
# Configures and builds Weft in build/ (Release, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
[ -f build/build.ninja ] || cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build "$@"
