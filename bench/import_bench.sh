#!/usr/bin/env bash
# Import speed (foundation issue, "Done when"): importing weightless default
# BERT (goal < 0.5 s) and a BERT-Base exported by PyTorch with its weights
# (≈ 440 MB; goal < 3 s and < 1.5 GB peak memory). Not a test: prints the
# measured wall time and peak RSS of each import (best of 3).
#
#   bench/import_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # label, command...
  local label=$1 best=999 rss=0
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
    read -r t m <"$work/time"
    best=$(python3 -c "print(min($best, $t))")
    rss=$m
  done
  printf '%-44s %6.2f s   %7.0f MB peak RSS\n' "$label" "$best" "$(python3 -c "print($rss/1024)")"
}

"$build/bin/weft-zoo" bert -o "$work/bert.onnx"
measure "weftc bert (weightless, batch 256)" \
  "$build/bin/weftc" "$work/bert.onnx" --global-batch 256

"${WEFT_VENV:-build/venv}/bin/python" bench/export_bert_base.py -o "$work/bert-base.onnx" 2>/dev/null
ls -l "$work/bert-base.onnx" | awk '{printf "BERT-Base export: %.0f MB\n", $5/1e6}'
measure "weftc BERT-Base from PyTorch --with-weights" \
  "$build/bin/weftc" "$work/bert-base.onnx" --global-batch 32 --with-weights
measure "weftc BERT-Base from PyTorch (shapes only)" \
  "$build/bin/weftc" "$work/bert-base.onnx" --global-batch 32
