#!/usr/bin/env bash
# Synthesis benchmarks of issue 7 (numbers in docs/benchmarks.md):
#  1. search quality: bert --layers 2 on hap-64 with --fixed-ratios --no-memo,
#     admissible heuristic vs --heuristic=zero --max-expansions 5000000
#     (tables allowed 16 GB so that the expansion cap is what stops it);
#  2. speed: default bert on hap-64, gpt --layers 96 on mixed-256;
#  3. plan quality: vgg19, vit, bert, bert-moe on hap-8/16/32/64, the
#     search's own plan against DP-EV, DP-CP, TP-DP and the lower bound.
# Every run bypasses the plan cache. Step times are estimates of the cost
# model (docs/Evaluator.md); wall times are measured on this machine.
# Usage: bench/synth_bench.sh [BUILD_DIR] [OUT_DIR]   (env SKIP="quality speed")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-synth}
BIN=$BUILD/bin
SKIP=${SKIP:-}
mkdir -p "$OUT"

summary() { "$(command -v python3)" bench/synth_summary.py "$@"; }

weftc() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$BIN/weftc" --no-cache "$@" \
    -o "$OUT/$name" >"$OUT/$name.txt" 2>"$OUT/$name.err" || {
    echo "$name: exit $? ($(tail -1 "$OUT/$name.err"))"
    return 0
  }
  summary "$OUT/$name"
}

if [[ " $SKIP " != *" search "* ]]; then
  echo "== search quality: bert --layers 2 on hap-64, fixed ratios, no memo"
  "$BIN/weft-zoo" bert --layers 2 -o "$OUT/bert-2.onnx"
  weftc astar-admissible "$OUT/bert-2.onnx" --cluster examples/clusters/hap-64.yaml \
    --fixed-ratios --no-memo
  weftc astar-zero "$OUT/bert-2.onnx" --cluster examples/clusters/hap-64.yaml \
    --fixed-ratios --no-memo --heuristic=zero --max-expansions 5000000 \
    --search-memory 16
fi

if [[ " $SKIP " != *" speed "* ]]; then
  echo "== speed"
  "$BIN/weft-zoo" bert -o "$OUT/bert.onnx"
  weftc speed-bert-hap64 "$OUT/bert.onnx" --cluster examples/clusters/hap-64.yaml
  "$BIN/weft-zoo" gpt --layers 96 -o "$OUT/gpt-96.onnx"
  weftc speed-gpt96-mixed256 "$OUT/gpt-96.onnx" --cluster examples/clusters/mixed-256.yaml
fi

if [[ " $SKIP " != *" quality "* ]]; then
  echo "== plan quality (batch 32 per GPU)"
  for gpus in 8 16 32 64; do
    for model in vgg19 vit bert bert-moe; do
      extra=()
      [[ $model == bert-moe ]] && extra=(--experts $((2 * gpus)))
      "$BIN/weft-zoo" "$model" "${extra[@]}" -o "$OUT/$model-$gpus.onnx"
      weftc "quality-$model-hap$gpus" "$OUT/$model-$gpus.onnx" \
        --cluster "examples/clusters/hap-$gpus.yaml" --baselines
    done
  done
fi
