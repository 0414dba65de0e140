#!/usr/bin/env bash
# Reference interpreter speed (issue 6, "Done when"): weft-run of
# `weft-zoo bert --layers 2 --hidden 256 --heads 4 --seq 64` (vocabulary
# 30522) at global batch 16, forward and backward. The issue's goal, < 3 s,
# is for the SPMD run on 8 virtual devices; this measures the single-device
# run that SPMD execution builds on. Not a test: prints weft-run's own
# forward and backward times and the process's wall time and peak RSS
# (best of 3 by wall time).
#
#   bench/exec_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/bin/weft-zoo" bert --layers 2 --hidden 256 --heads 4 --seq 64 \
  -o "$work/bert.onnx"
cmd=("$build/bin/weft-run" "$work/bert.onnx" --global-batch 16)
echo "command: weft-zoo bert --layers 2 --hidden 256 --heads 4 --seq 64 -o bert.onnx"
echo "         weft-run bert.onnx --global-batch 16"
best=999
for _ in 1 2 3; do
  /usr/bin/time -f "%e %M" -o "$work/time" "${cmd[@]}" >"$work/out"
  read -r t m <"$work/time"
  if python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then
    best=$t
    rss=$m
    cp "$work/out" "$work/best"
  fi
done
grep -E '^(loss|time):' "$work/best"
printf 'process:     %.2f s wall (import + forward + backward), %.0f MB peak RSS\n' \
  "$best" "$(python3 -c "print($rss/1024)")"
