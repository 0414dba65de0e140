#!/usr/bin/env bash
# The main job on a bundled example: installs what is missing, builds, writes
# BERT-Base with weft-zoo and compiles it for the HAP cluster (2 × 8 V100 +
# 6 × 8 P100): summary, lower bound, the baselines, and a synthesised plan
# written to out/bert-hap64/: plan.mlir, plan.json, torch/ (the per-rank
# PyTorch program), launch/ (torchrun, local and Slurm scripts), timeline.svg
# and trace.json (the estimated step).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh weftc weft-zoo weft-run
mkdir -p out
build/bin/weft-zoo bert -o out/bert.onnx
build/bin/weftc out/bert.onnx --cluster examples/clusters/hap-64.yaml --baselines \
  -o out/bert-hap64 "$@"
