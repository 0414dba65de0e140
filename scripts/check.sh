#!/usr/bin/env bash
# Builds Weft and runs every test: lit (FileCheck), GoogleTest and the
# end-to-end tests with PyTorch, all registered with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
