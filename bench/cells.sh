#!/usr/bin/env bash
# Cells and the compiler oracle (issue 29; numbers in docs/benchmarks.md):
#  1. estimates per second and accuracy: weft-cell-bench on BERT-Base
#     (global batch 128) on mixed-a100-v100-t4, every one-stage Cell (one
#     type or several) in the fast mode after the first, COMPARE of them
#     synthesised in full (|error| distribution);
#  2. the mixed zoo workload (data/workloads/mixed-zoo.csv: BERT, GPT, ViT,
#     VGG, MoE jobs of several sizes) with weft-sched --oracle compiler on
#     mixed-a100-v100-t4 for weft, crius, gavel-maxmin, hadar-fork and fifo,
#     first with an empty oracle cache (cold), then again (warm);
#  3. "heavy": 96 jobs at 12 jobs/h (bench/mixed_workload.py --rate 12),
#     same cluster and policies, with the cache of step 2;
#  4. "large": the same 48 jobs with steps (mixed-zoo-steps.csv) on
#     alibaba-2023 (6,212 GPUs), Cells up to 16 GPUs, cold then warm.
# Step and iteration times are estimates of the cost model; wall times are
# measured on this machine.
# Usage: bench/cells.sh [BUILD_DIR] [OUT_DIR]
#        (env COMPARE=12, SKIP="rate sched heavy large")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-cells}
COMPARE=${COMPARE:-12}
SKIP=${SKIP:-}
CLUSTER=examples/clusters/mixed-a100-v100-t4.yaml
mkdir -p "$OUT"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"

if [[ " $SKIP " != *" rate "* ]]; then
  echo "== Cell estimates: bert (batch 128) on mixed-a100-v100-t4"
  "$BUILD/bin/weft-cell-bench" "bert;batch=128" "$CLUSTER" --compare "$COMPARE" \
    | tee "$OUT/cell-rate.txt"
fi

if [[ " $SKIP " != *" sched "* ]]; then
  POLICIES=weft,crius,gavel-maxmin,hadar-fork,fifo
  rm -f "$OUT/oracle.cache"
  for run in cold warm; do
    echo "== mixed zoo workload on mixed-a100-v100-t4, $run oracle cache"
    /usr/bin/time -f "wall %e s, peak RSS %M KB" "$BUILD/bin/weft-sched" \
      --cluster "$CLUSTER" --trace data/workloads/mixed-zoo.csv \
      --oracle "compiler:cache=$OUT/oracle.cache" --policy "$POLICIES" \
      --report "$OUT/sched-$run" 2>&1 | grep -v '^\s*$' | tee "$OUT/sched-$run.txt"
  done
fi

if [[ " $SKIP " != *" heavy "* ]]; then
  echo "== 96 jobs at 12 jobs/h on mixed-a100-v100-t4"
  python3 bench/mixed_workload.py --jobs 96 --rate 12 --seed 1 -o "$OUT/mixed-heavy.csv"
  "$BUILD/bin/weft-sched" --cluster "$CLUSTER" --trace "$OUT/mixed-heavy.csv" \
    --oracle "compiler:cache=$OUT/oracle.cache" --policy weft,crius,gavel-maxmin,hadar-fork,fifo \
    2>&1 | grep -v '^\s*$' | tee "$OUT/sched-heavy.txt"
fi

if [[ " $SKIP " != *" large "* ]]; then
  rm -f "$OUT/oracle-large.cache"
  for run in cold warm; do
    echo "== mixed zoo jobs on alibaba-2023, Cells up to 16 GPUs, $run oracle cache"
    /usr/bin/time -f "wall %e s, peak RSS %M KB" "$BUILD/bin/weft-sched" \
      --cluster examples/clusters/alibaba-2023.yaml --trace data/workloads/mixed-zoo-steps.csv \
      --oracle "compiler:cache=$OUT/oracle-large.cache:max-gpus=16" \
      --policy weft,crius,gavel-maxmin,hadar-fork,fifo 2>&1 | grep -v '^\s*$' | tee "$OUT/sched-large-$run.txt"
  done
fi
