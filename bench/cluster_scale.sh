#!/usr/bin/env bash
# Compile time on large clusters (issue 29, "cluster scale"): weftc synthesis
# of bert and mlp (weft-zoo defaults) on alibaba-2023.yaml (6,212 GPUs, 1,213
# nodes, 12 device classes) and on mixed-256.yaml (256 GPUs, 44 nodes), with
# --no-cache. Wall time, CPU time (user + sys) and peak RSS from
# /usr/bin/time; the machine is shared, so the 1-minute load average before
# each run is printed beside it; "synthesis wall" is weftc's own figure
# (the rest is import and writing plan.json, the torch program and the
# launch scripts). Goal: bert on alibaba-2023 <= 3 s wall.
# With BEFORE=path/to/another/weftc, every case also runs that binary and
# the two plans are compared (plan.mlir byte for byte, plan.json without its
# wall-clock fields).
# Usage: bench/cluster_scale.sh [BUILD_DIR] [OUT_DIR]
#        (env BEFORE=weftc-binary, REPEAT=N runs per case, best wall kept)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-cluster-scale}
WEFTC=$BUILD/bin/weftc
BEFORE=${BEFORE:-}
REPEAT=${REPEAT:-1}
mkdir -p "$OUT"
for m in bert mlp; do
  "$BUILD/bin/weft-zoo" "$m" -o "$OUT/$m.onnx"
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"
echo "command: $WEFTC MODEL.onnx --cluster examples/clusters/CLUSTER.yaml --no-cache -o DIR"
[ -n "$BEFORE" ] && echo "before: $BEFORE"

# run LABEL BIN MODEL CLUSTER -> prints one table row; keeps the best wall
# of REPEAT runs (with that run's CPU, RSS and load).
run() {
  local label=$1 bin=$2 model=$3 cluster=$4 best="" row=""
  local dir="$OUT/$label-$model-$cluster"
  for _ in $(seq "$REPEAT"); do
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    rm -rf "$dir"
    /usr/bin/time -f "%e %U %S %M" -o "$dir.time" "$bin" "$OUT/$model.onnx" \
      --cluster "examples/clusters/$cluster.yaml" --no-cache -o "$dir" \
      > "$dir.out" 2>&1
    local wall user sys rss
    read -r wall user sys rss < "$dir.time"
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
      best=$wall
      local cpu expansions step
      cpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}")
      expansions=$(grep -o '[0-9]* expansions' "$dir.out" | head -1 | cut -d' ' -f1)
      step=$(grep -m1 '^plan:' "$dir.out" | awk '{print $2, $3}')
      synth=$(grep -m1 '^plan:' "$dir.out" | grep -o 'synthesis [0-9.]* m*s' | cut -d' ' -f2-)
      row="| $model | $cluster | $label | $wall s | $cpu s | $synth | $((rss / 1024)) MB | $expansions | $step | $load |"
    fi
  done
  echo "$best" > "$dir.best"
  echo "$row"
}

same() {
  local a="$OUT/before-$1-$2" b="$OUT/after-$1-$2"
  if cmp -s "$a/plan.mlir" "$b/plan.mlir" &&
     diff -q <(grep -v wall "$a/plan.json") <(grep -v wall "$b/plan.json") > /dev/null; then
    echo "identical"
  else
    echo "DIFFERENT"
  fi
}

echo
echo "| model | cluster | binary | wall | CPU (user + sys) | synthesis wall | peak RSS | expansions | step estimate | load before |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
cases="bert:alibaba-2023 mlp:alibaba-2023 bert:mixed-256 mlp:mixed-256"
for c in $cases; do
  model=${c%%:*} cluster=${c#*:}
  [ -n "$BEFORE" ] && run before "$BEFORE" "$model" "$cluster"
  run after "$WEFTC" "$model" "$cluster"
done
if [ -n "$BEFORE" ]; then
  echo
  for c in $cases; do
    echo "plans of ${c%%:*} on ${c#*:}, before and after: $(same "${c%%:*}" "${c#*:}")"
  done
fi
wall=$(cat "$OUT/after-bert-alibaba-2023.best")
if awk "BEGIN{exit !($wall <= 3)}"; then
  echo "goal (bert on alibaba-2023 <= 3 s wall): met ($wall s)"
else
  echo "goal (bert on alibaba-2023 <= 3 s wall): missed ($wall s)"
fi
