#!/usr/bin/env bash
# Scheduler benchmarks of issues 5 and 29 (numbers in docs/benchmarks.md):
#  1. Gavel's set-up: gavel-108, Gavel's continuous generator at several
#     arrival rates, jobs 4000-5000 measured, every policy;
#  2. speed: 10,000 jobs on alibaba-2023 (6212 GPUs) with fifo and hadar, and
#     gavel-maxmin with its LP time reported separately;
#  3. network: fair (ECMP) vs crux on mixed-256 (leaf/spine, 2:1).
# Usage: bench/sched_bench.sh [BUILD_DIR] [OUT_DIR]   (env RATES="1 2 3")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-sched}
SCHED=$BUILD/bin/weft-sched
TABLE=data/gavel/simulation_throughputs.json
RATES=${RATES:-"1 2 3"}
POLICIES=fifo,maxmin-agnostic,gavel-maxmin,gavel-throughput,hadar,hadar-fork,crius,rubick,weft
mkdir -p "$OUT"
# Prints each simulation's command line before running it.
show() {
  local args=("$@") i=0
  while [ "${args[$i]}" != "$SCHED" ]; do i=$((i + 1)); done
  echo "+ ${args[*]:$i}"
  "$@"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"

for rate in $RATES; do
  echo "== gavel-108, rate $rate jobs/h"
  show /usr/bin/time -f "wall %e s, peak RSS %M KB" "$SCHED" \
    --cluster examples/clusters/gavel-108.yaml \
    --workload "gavel:rate=$rate,jobs=6000,seed=0,window=4000-5000" \
    --oracle "table:$TABLE" --policy "$POLICIES" \
    --report "$OUT/gavel-rate-$rate" | tee "$OUT/gavel-rate-$rate.txt"
done

echo "== alibaba-2023, 10000 jobs, fifo + hadar"
show /usr/bin/time -f "wall %e s, peak RSS %M KB" "$SCHED" \
  --cluster examples/clusters/alibaba-2023.yaml \
  --workload gavel:rate=1000,jobs=10000,seed=0 \
  --oracle "table:$TABLE" --policy fifo,hadar \
  --report "$OUT/alibaba-fast" | tee "$OUT/alibaba-fast.txt"

echo "== alibaba-2023, 10000 jobs, gavel-maxmin"
show /usr/bin/time -f "wall %e s, peak RSS %M KB" "$SCHED" \
  --cluster examples/clusters/alibaba-2023.yaml \
  --workload gavel:rate=1000,jobs=10000,seed=0 \
  --oracle "table:$TABLE" --policy gavel-maxmin \
  --report "$OUT/alibaba-lp" | tee "$OUT/alibaba-lp.txt"

for net in fair crux; do
  echo "== mixed-256, network $net"
  show "$SCHED" --cluster examples/clusters/mixed-256.yaml \
    --workload gavel:rate=100,jobs=1000,seed=0 \
    --oracle "table:$TABLE" --policy fifo,gavel-maxmin,hadar --network "$net" \
    --report "$OUT/network-$net" | tee "$OUT/network-$net.txt"
done

/usr/bin/python3 bench/sched_summary.py "$OUT" $RATES
