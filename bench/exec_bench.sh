#!/usr/bin/env bash
# Reference interpreter speed (issue 6, "Done when"): weft-run of
# `weft-zoo bert --layers 2 --hidden 256 --heads 4 --seq 64` (vocabulary
# 30522) at global batch 16, forward and backward, on one device and as an
# SPMD plan on 8 virtual devices (the DP-CP baseline on two nodes of four
# devices, A100 and V100: uneven batch shares). The issue's goal: the SPMD
# run in under 3 s. Not a test: prints weft-run's own times and the
# process's wall time and peak RSS (best of 3 by wall time).
#
#   bench/exec_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/bin/weft-zoo" bert --layers 2 --hidden 256 --heads 4 --seq 64 \
  -o "$work/bert.onnx"
"$build/bin/weftc" "$work/bert.onnx" --cluster test/lit/Exec/Inputs/mixed-2x4.yaml \
  --global-batch 16 --baselines --no-synthesis -o "$work/plans" >/dev/null

best_of_3() {
  local best=999 rss=0 t m
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out"
    read -r t m <"$work/time"
    if python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then
      best=$t
      rss=$m
      cp "$work/out" "$work/best"
    fi
  done
  printf 'process:     %.2f s wall, %.0f MB peak RSS\n' \
    "$best" "$(python3 -c "print($rss/1024)")" >>"$work/best"
}

echo "== one device"
echo "command: weft-run bert.onnx --global-batch 16"
best_of_3 "$build/bin/weft-run" "$work/bert.onnx" --global-batch 16
grep -E '^(loss|time|process):' "$work/best"

echo "== SPMD, 8 virtual devices (reference run included)"
echo "command: weftc bert.onnx --cluster test/lit/Exec/Inputs/mixed-2x4.yaml --global-batch 16 --baselines --no-synthesis -o plans"
echo "         weft-run bert.onnx --global-batch 16 --plan plans/baselines/DP-CP/plan.mlir"
best_of_3 "$build/bin/weft-run" "$work/bert.onnx" --global-batch 16 \
  --plan "$work/plans/baselines/DP-CP/plan.mlir"
grep -E '^(loss|spmd loss|difference|time|verdict|process):' "$work/best"
