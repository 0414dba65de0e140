#!/usr/bin/env bash
# Gradient synchronisation at scale (issue 27, item 4; docs/benchmarks.md
# "Gradient sync at scale"): DP-EV of BERT-Base (weft-zoo bert) on flat
# clusters of N nodes of 4 V100 (links of examples/clusters/gavel-108.yaml:
# 12 GB/s and 5 us inside a node, 25 Gbit/s and 20 us between nodes) for
# N = 8, 64, 512, and on examples/clusters/alibaba-2023.yaml; one collective
# per gradient tensor (--bucket-mb 0) against 25 MiB buckets (the default).
# Prints one row per cluster and bucket size: DP-EV's estimated step, its
# communication and the gradient sync's share. Every figure is an estimate
# of the cost model (docs/CostModel.md).
# Usage: bench/sync_scaling.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-sync}
BIN=$BUILD/bin
mkdir -p "$OUT"

flat() {
  cat >"$OUT/flat-$1.yaml" <<SPEC
name: flat-$1
defaults:
  intra_bandwidth: 12 GB/s
  intra_latency: 5 us
  nic_bandwidth: 25 Gbit/s
  nic_latency: 20 us
nodes:
  - name: v100-node
    count: $1
    type: V100
    devices: 4
SPEC
  echo "$OUT/flat-$1.yaml"
}

"$BIN/weft-zoo" bert -o "$OUT/bert.onnx" >/dev/null
printf "%-14s %7s %7s %12s %12s %12s\n" cluster devices bucket "DP-EV step" "comm" "comm share"
for spec in $(flat 8) $(flat 64) $(flat 512) examples/clusters/alibaba-2023.yaml; do
  for mb in 0 25; do
    "$BIN/weftc" "$OUT/bert.onnx" --cluster "$spec" --baselines --json \
      --bucket-mb "$mb" >"$OUT/$(basename "$spec" .yaml)-$mb.json"
    "$(command -v python3)" - "$OUT/$(basename "$spec" .yaml)-$mb.json" "$mb" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
row = next(r for r in d["baselines"] if r["name"] == "DP-EV")
name, devices = d["cluster"], d["devices"]
print("%-14s %7s %4s MiB %9.1f ms %9.1f ms %10.1f %%" % (
    name, devices, sys.argv[2], row["step_time_s"] * 1e3, row["comm_s"] * 1e3,
    100 * row["comm_share"]))
PY
  done
done
